import { z } from 'zod';
import type { DurationDist } from '../../../foundation/distributions.js';
import { durationDist, int, toDurationDist } from '../../../foundation/fields.js';
import { arrivalGenerator, arrivalShape, type PlannedArrival } from './kind.js';

/** N virtual users, each pacing itself (bench/closedLoop.ts). */
export interface ClosedPlan {
  readonly kind: 'closed';
  readonly users: number;
  readonly think: DurationDist;
}

/**
 * `closedLoop:` N virtual users, each sending its next request a think time after the
 * last answer. For comparison only: the report says so.
 */
export const closedLoop = {
  shape: arrivalShape({
    schema: z.strictObject({ users: int(1, 100_000), think: durationDist }),
    notSpikeable: () => 'a closed loop',
    plan: (c): PlannedArrival<ClosedPlan> => ({
      model: 'closed',
      arrival: { kind: 'closed', users: c.users, think: toDurationDist(c.think) },
      meanPerS: null,
      peakPerS: null,
    }),
    describe: (c) => `CLOSED loop (for comparison only): ${c.users} virtual users`,
    example: '{ users: 10, think: { dist: exponential, mean: 50ms } }',
  }),
  generator: arrivalGenerator({
    kind: 'closed',
    // The users pace themselves: there is no schedule of intended times to generate.
    build: () => null,
    expectedOrigins: (_a: ClosedPlan) => null,
    expectedArrivals: (_a: ClosedPlan) => null,
  }),
};
