import { z } from 'zod';

/**
 * The plain-data inputs of the sweep and step-test figures. `metabench sweep` writes a
 * sweep table to DIR/sweep.json and `metabench calibrate` a step table to DIR/steps.json;
 * the report draws them when present.
 *
 * Sweep table: one row per point of the sweep (a factor value, or a combination of two
 * for a grid), each with its figures of merit and the metastable verdict, both over the
 * point's valid runs only (DESIGN.md §2); invalid runs are counted apart, with the
 * validity checks they failed.
 *
 *   { "name": "retry-storm-rate",                    // optional: the sweep's name
 *     "design": "one-at-a-time",                     // or "grid" (full factorial of two factors)
 *     "factors": [{ "name": "maxAttempts", "unit": "attempts", "reference": 4 }],
 *     "figures": [{ "name": "amplification", "unit": "attempts per origin" }],
 *     "rows": [{ "varied": "maxAttempts",            // one-at-a-time: the factor moved in this row
 *                "factors": { "maxAttempts": 2 },
 *                "figures": { "amplification": 1.4 },  // means over the valid runs
 *                "perRun": { "amplification": [1.3, 1.5] },  // optional: each valid run's value
 *                "verdict": "recovered",             // metastable | recovered | unmeasured | invalid (no valid run)
 *                "runs": 3, "metastableRuns": 0,     // optional: repetitions behind the verdict
 *                "validRuns": 2, "invalidRuns": 1,   // optional: metastableRuns is out of validRuns
 *                "invalidBecause": { "lag": 1 },     // optional: invalid runs per failed check
 *                "outcomes": "recovered 2/2; invalid 1 (schedule lag)" }] }  // optional
 *
 * Step table: one row per step of offered load, and the saturation point found.
 *
 *   { "steps": [{ "offeredPerS": 100, "goodputPerS": 99.6,
 *                 "latencyMs": { "samples": 2990, "p50": 21, "p99": 88 } }],
 *     "saturation": { "offeredPerS": 380, "goodputPerS": 371 } }   // or null when not reached
 */
const factorValue = z.union([z.number(), z.string()]);

export const SweepTableSchema = z.strictObject({
  /** The sweep's name (its file's `name`); older tables have none. */
  name: z.string().optional(),
  design: z.enum(['one-at-a-time', 'grid']),
  factors: z
    .array(z.strictObject({ name: z.string(), unit: z.string(), reference: factorValue.optional() }))
    .min(1),
  figures: z.array(z.strictObject({ name: z.string(), unit: z.string() })).min(1),
  rows: z.array(
    z.strictObject({
      varied: z.string().optional(),
      factors: z.record(z.string(), factorValue),
      figures: z.record(z.string(), z.number().nullable()),
      /** Each valid run's value of each figure (null: not measured), for confidence intervals and effects. */
      perRun: z.record(z.string(), z.array(z.number().nullable())).optional(),
      verdict: z.enum(['metastable', 'recovered', 'unmeasured', 'invalid']),
      runs: z.number().int().positive().optional(),
      metastableRuns: z.number().int().nonnegative().optional(),
      validRuns: z.number().int().nonnegative().optional(),
      invalidRuns: z.number().int().nonnegative().optional(),
      invalidBecause: z.record(z.string(), z.number().int().nonnegative()).optional(),
      outcomes: z.string().optional(),
    }),
  ),
});
export type SweepTable = z.infer<typeof SweepTableSchema>;
export type SweepVerdict = SweepTable['rows'][number]['verdict'];

export const StepTableSchema = z.strictObject({
  steps: z.array(
    z.strictObject({
      offeredPerS: z.number(),
      goodputPerS: z.number().nullable(),
      latencyMs: z.strictObject({
        samples: z.number().int().nonnegative(),
        p50: z.number().nullable(),
        p99: z.number().nullable(),
      }),
    }),
  ),
  saturation: z.strictObject({ offeredPerS: z.number(), goodputPerS: z.number().nullable() }).nullable(),
});
export type StepTable = z.infer<typeof StepTableSchema>;

export function isSweepTable(x: unknown): x is SweepTable {
  return SweepTableSchema.safeParse(x).success;
}

export function isStepTable(x: unknown): x is StepTable {
  return StepTableSchema.safeParse(x).success;
}
