import { z } from 'zod';
import { experimentSchema } from './schema.js';
import { sweepSchema } from './sweep.js';

/**
 * JSON Schemas of the experiment and sweep files, for editors (yaml-language-server
 * completes and checks a file whose first line names one). They describe the input as
 * written: unit fields are strings with a pattern. Cross-field rules (one load shape,
 * shares summing to 100%, cost classes) are only checked by `metabench validate`.
 */
export function jsonSchemaOf(kind: 'experiment' | 'sweep'): Record<string, unknown> {
  const schema = z.toJSONSchema(kind === 'experiment' ? experimentSchema : sweepSchema, {
    io: 'input',
    unrepresentable: 'any',
  });
  return {
    ...schema,
    // The system under test: the built-in lab or your own, exactly one (an editor can say so).
    ...(kind === 'experiment' ? { oneOf: [{ required: ['lab'] }, { required: ['system'] }] } : {}),
    title: kind === 'experiment' ? 'metabench experiment' : 'metabench sweep',
    description:
      kind === 'experiment'
        ? 'An experiment file of metabench: the system under test (the built-in lab, or your own), the open-loop load, the client model, the steady-state hypothesis, the schedule with its trigger, and the recovery criterion.'
        : 'A sweep file of metabench: a base experiment and the factors (fields by dotted path) to vary, one at a time or factorial.',
  };
}

export function jsonSchemaText(kind: 'experiment' | 'sweep'): string {
  return JSON.stringify(jsonSchemaOf(kind), null, 2) + '\n';
}
