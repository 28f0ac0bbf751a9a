import { z } from 'zod';
import { parseThreshold } from './threshold.js';
import { parseDuration, parseMultiple, parsePercent, parseRate, type Parsed } from './units.js';

/**
 * The experiment file's schema. Objects are strict (an unknown key is an error, with
 * a did-you-mean), units are parsed here and nowhere else, and every limit is stated
 * so a typo or an absurd value is refused before anything starts.
 */

function unit<T>(what: string, parse: (v: unknown) => Parsed<T>, check?: (v: T) => string | undefined) {
  return z
    .string({
      error: (iss) =>
        `expected ${what} (got ${iss.input === undefined ? 'nothing' : JSON.stringify(iss.input)})`,
    })
    .transform((s, ctx) => {
      const r = parse(s);
      if (!r.ok) {
        ctx.addIssue({ code: 'custom', message: r.message });
        return z.NEVER;
      }
      const problem = check?.(r.value);
      if (problem) {
        ctx.addIssue({ code: 'custom', message: problem });
        return z.NEVER;
      }
      return r.value;
    });
}

const DAY_MS = 86_400_000;
const duration = (min = 0, max = DAY_MS) =>
  unit('a duration such as 500ms, 2s or 1m', parseDuration, (ms) =>
    ms < min
      ? `must be at least ${min} ms (got ${ms} ms)`
      : ms > max
        ? `must be at most ${max / 1000} s (got ${ms / 1000} s)`
        : undefined,
  );
const positiveDuration = (max = DAY_MS) =>
  unit('a duration such as 500ms, 2s or 1m', parseDuration, (ms) =>
    ms <= 0
      ? 'must be greater than zero'
      : ms > max
        ? `must be at most ${max / 1000} s (got ${ms / 1000} s)`
        : undefined,
  );
const rate = unit('a rate such as 280/s or 70% capacity', parseRate, (r) =>
  'perS' in r
    ? r.perS <= 0 || r.perS > 1_000_000
      ? `must be greater than 0/s and at most 1000000/s (got ${r.perS}/s)`
      : undefined
    : r.capacityFraction <= 0 || r.capacityFraction > 100
      ? `must be greater than 0% and at most 10000% of capacity`
      : undefined,
);
const fraction = unit('a percentage such as 10%', parsePercent, (f) =>
  f < 0 || f > 1 ? 'must be between 0% and 100%' : undefined,
);
const multiple = unit('a multiple such as 5x', parseMultiple, (k) =>
  k <= 0 || k > 1000 ? 'must be greater than 0x and at most 1000x' : undefined,
);
const int = (min: number, max: number) =>
  z
    .number({ error: 'expected a whole number' })
    .int('expected a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

const work = z.strictObject({
  dist: z.enum(['constant', 'exponential', 'lognormal']),
  mean: positiveDuration(600_000),
  /** lognormal only: standard deviation in log space */
  sigma: z.number().positive().max(10).optional(),
});

const api = z.strictObject({
  workers: int(1, 10_000),
  work,
  queue: z.enum(['fifo']).default('fifo'),
});

const lab = z.strictObject({ api });

const load = z.strictObject({
  arrival: z.enum(['poisson', 'constant']),
  rate,
});

const retryPolicy = z.strictObject({
  policy: z.enum(['none', 'immediate']),
  maxAttempts: int(1, 100).default(1),
});

const client = z.strictObject({
  /** Per-attempt timeout. */
  timeout: positiveDuration(3_600_000),
  /** Overall deadline of an origin request from its intended time; none when absent. */
  deadline: positiveDuration(3_600_000).optional(),
  retry: retryPolicy.default({ policy: 'none', maxAttempts: 1 }),
});

export const TRIGGER_KINDS = ['pause'] as const;
export const TRIGGER_TARGETS = ['api'] as const;

const trigger = z.strictObject({
  kind: z.enum(TRIGGER_KINDS),
  target: z.enum(TRIGGER_TARGETS),
  duration: positiveDuration(),
});

const schedule = z.strictObject({
  warmup: duration(),
  baseline: positiveDuration(),
  trigger,
  /** How long to keep measuring after the trigger ends. */
  observe: positiveDuration(),
});

const recovery = z.strictObject({
  /** Recovery deadline as a multiple k of the trigger's duration. */
  within: multiple,
  tolerance: fraction,
  window: positiveDuration(),
  hold: duration(),
});

export const HYPOTHESIS_METRICS = ['goodput', 'p50', 'p90', 'p99', 'p999', 'max', 'errorRatio'] as const;
type HypothesisMetric = (typeof HYPOTHESIS_METRICS)[number];

/** A threshold such as "<= 400ms" or ">= 95% offered", checked here and judged by analysis/hypothesis.ts. */
const threshold = (metric: HypothesisMetric) =>
  z.string({ error: 'expected a threshold such as "<= 400ms" or ">= 95% offered"' }).superRefine((s, ctx) => {
    const r = parseThreshold(metric, s);
    if (!r.ok) ctx.addIssue({ code: 'custom', message: r.message });
  });

const hypothesis = z.strictObject(
  Object.fromEntries(HYPOTHESIS_METRICS.map((m) => [m, threshold(m).optional()])) as Record<
    HypothesisMetric,
    z.ZodOptional<ReturnType<typeof threshold>>
  >,
);

export const experimentSchema = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,79}$/, 'use lower-case letters, digits, ".", "_" and "-" (at most 80)'),
  description: z.string().max(2000).optional(),
  lab,
  load,
  client,
  hypothesis: hypothesis.default({}),
  schedule,
  recovery,
  repeat: int(1, 1000).default(1),
  seed: int(0, 2 ** 32 - 1).default(1),
});

/** An experiment as validated: units already in ms, req/s and fractions. */
export type Experiment = z.output<typeof experimentSchema>;
