import { z } from 'zod';
import { BenchError } from '../../../foundation/errors.js';
import type { Lab, UndoRecipe } from '../../lab/Lab.js';
import { defineTrigger, timing } from '../kind.js';
import type { Trigger } from '../Trigger.js';
import { putState } from '../putState.js';

/** What the provider does while the trigger lasts (the stub's `/_stub/state` fields). */
export type ProviderOutageMode = 'unavailable' | 'reset' | 'slow';

/** The provider as it is outside an outage: up, at its profile's own speed. */
const HEALTHY = { down: false, slowFactor: 1 } as const;

function stateUrl(lab: Lab): string {
  const base = lab.llmUrl;
  if (base === undefined)
    throw new BenchError('E_LAB', 'provider-outage needs the LLM provider stub in the lab (lab.llm)');
  return `${base.replace(/\/+$/, '')}/_stub/state`;
}

function setState(lab: Lab, body: Record<string, unknown>, what: string): Promise<void> {
  return putState(stateUrl(lab), body, 'the LLM provider stub', what);
}

/**
 * An outage of the LLM provider through the stub's run-time switch: the provider itself
 * fails (503s, dropped connections, or a slowdown), as in a provider's incident, while
 * its process and the link stay up. The api's own retries to the provider are what may
 * amplify it. Undone by switching the provider back to healthy.
 */
function providerOutageTrigger(mode: ProviderOutageMode, slowFactor?: number): Trigger {
  const fault = mode === 'slow' ? { slowFactor: slowFactor ?? 1 } : { down: mode };
  return {
    kind: 'provider-outage',
    target: 'llm',
    describe: () =>
      mode === 'slow'
        ? `slow the LLM provider down ${slowFactor}x`
        : `take the LLM provider down (${mode === 'unavailable' ? 'every call answered 503' : 'every connection reset'})`,
    undoRecipe: (lab): UndoRecipe => ({
      // The stub's state route takes POST as well as PUT (the journal's http recipe posts).
      kind: 'http',
      method: 'POST',
      url: stateUrl(lab),
      body: { ...HEALTHY },
      what: 'bring the LLM provider back (stub state: up, normal speed)',
    }),
    apply: (lab) => setState(lab, fault, 'start the outage'),
    undo: (lab) => setState(lab, { ...HEALTHY }, 'end the outage'),
  };
}

/**
 * The LLM provider fails through the stub's run-time switch (as a provider's incident
 * does), the process and its link untouched: `unavailable` answers every call 503,
 * `reset` drops every connection, `slow` multiplies its latencies by `slowFactor`.
 */
export const providerOutage = defineTrigger({
  kind: 'provider-outage',
  schema: z
    .strictObject({
      kind: z.literal('provider-outage'),
      target: z.literal('llm').default('llm'),
      mode: z.enum(['unavailable', 'reset', 'slow']).default('unavailable'),
      slowFactor: z.number().gt(1).max(1000).optional(),
      ...timing,
    })
    .superRefine((t, ctx) => {
      if (t.mode === 'slow' && t.slowFactor === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['slowFactor'],
          message: 'mode: slow needs slowFactor (e.g. 10)',
        });
      if (t.mode !== 'slow' && t.slowFactor !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['slowFactor'],
          message: `slowFactor is for mode: slow, not ${t.mode}`,
        });
    }),
  summary:
    "The LLM provider fails through the stub's run-time switch, its process and link untouched: `unavailable` (503s), `reset` (dropped connections) or `slow` (latencies times `slowFactor`).",
  acts: 'provider',
  target: (t) => t.target,
  describe: (t, d) =>
    t.mode === 'slow'
      ? `LLM provider slowed ${t.slowFactor}x for ${d}`
      : `LLM provider down (${t.mode === 'unavailable' ? '503 to every call' : 'every connection reset'}) for ${d}`,
  create: (t) => providerOutageTrigger(t.mode, t.slowFactor),
});
