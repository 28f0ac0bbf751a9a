import assert from 'node:assert/strict';
import { SpecError } from '../../foundation/errors.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';

/** The problems found in an experiment file's text (read as `file`); the test fails if the file is accepted. */
export function specIssues(text: string, file = 'x.yaml'): SpecError['issues'] {
  try {
    parseExperiment(text, file);
  } catch (err) {
    assert.ok(err instanceof SpecError, `expected a SpecError, got ${String(err)}`);
    return err.issues;
  }
  assert.fail('expected the file to be refused');
}
