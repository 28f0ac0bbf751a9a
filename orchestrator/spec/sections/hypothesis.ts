import { z } from 'zod';
import { parseThreshold } from '../threshold.js';

/** hypothesis: the steady state, declared before running. */
export const HYPOTHESIS_METRICS = ['goodput', 'p50', 'p90', 'p99', 'p999', 'max', 'errorRatio'] as const;
type HypothesisMetric = (typeof HYPOTHESIS_METRICS)[number];

/** A threshold such as "<= 400ms" or ">= 95% offered", checked here and judged by analysis/hypothesis.ts. */
const threshold = (metric: HypothesisMetric) =>
  z.string({ error: 'expected a threshold such as "<= 400ms" or ">= 95% offered"' }).superRefine((s, ctx) => {
    const r = parseThreshold(metric, s);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  });

export const hypothesis = z.strictObject(
  Object.fromEntries(HYPOTHESIS_METRICS.map((m) => [m, threshold(m).optional()])) as Record<
    HypothesisMetric,
    z.ZodOptional<ReturnType<typeof threshold>>
  >,
);
