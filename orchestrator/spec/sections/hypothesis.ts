import { z } from 'zod';
import { parseThreshold } from '../threshold.js';

/** hypothesis: the steady state, declared before running. */
/**
 * goodput against offered; response-time percentiles of successful origins (p95 among
 * them); the error ratio; ttftP95, the p95 of the client-side time to first token of the
 * successful streamed origins (analysis/classes.ts's STREAM_DEFINITIONS).
 */
export const HYPOTHESIS_METRICS = [
  'goodput',
  'p50',
  'p90',
  'p95',
  'p99',
  'p999',
  'max',
  'errorRatio',
  'ttftP95',
] as const;
export type HypothesisMetric = (typeof HYPOTHESIS_METRICS)[number];

/** A threshold such as "<= 400ms" or ">= 95% offered", checked here and judged by analysis/hypothesis.ts. */
const threshold = (metric: HypothesisMetric) =>
  z.string({ error: 'expected a threshold such as "<= 400ms" or ">= 95% offered"' }).superRefine((s, ctx) => {
    const r = parseThreshold(metric, s);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  });

const thresholdShape = () =>
  Object.fromEntries(HYPOTHESIS_METRICS.map((m) => [m, threshold(m).optional()])) as Record<
    HypothesisMetric,
    z.ZodOptional<ReturnType<typeof threshold>>
  >;

/** The thresholds of one request class (a `load.mix` name), judged on that class's origins alone. */
const classThresholds = z.strictObject(thresholdShape());

/**
 * Global thresholds (every origin), and optionally per request class:
 *   hypothesis:
 *     p99: "<= 400ms"
 *     classes:
 *       heavy: { p99: "<= 2s", errorRatio: "<= 1%" }
 *       chat: { ttftP95: "<= 1500ms" }
 * Each is judged in the baseline and again after recovery (analysis/summary.ts). A class
 * must be one of `load.mix` (checked in schema.ts, with a did-you-mean). The deprecated
 * `load.mix[].thresholds` are translated into `classes` when the file is read (spec/load.ts).
 */
export const hypothesis = z.strictObject({
  ...thresholdShape(),
  classes: z
    .record(
      z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'a request class name of load.mix'),
      classThresholds,
    )
    .optional(),
});

export type HypothesisSpec = z.output<typeof hypothesis>;
export type Thresholds = { readonly [M in HypothesisMetric]?: string | undefined };
