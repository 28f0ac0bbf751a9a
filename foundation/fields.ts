import { z } from 'zod';
import type { DurationDist } from './distributions.js';
import {
  parseDuration,
  parseMultiple,
  parsePercent,
  parseRate,
  UNIT_PATTERNS,
  type Parsed,
} from './units.js';

/**
 * Field types shared by every section of the experiment schema. Units are parsed here
 * and nowhere else; each field states its limits so absurd values are refused early.
 */

export function unit<T>(
  what: string,
  parse: (v: unknown) => Parsed<T>,
  check?: (v: T) => string | undefined,
  pattern?: string,
) {
  return (
    z
      .string({
        error: (iss) =>
          `expected ${what} (got ${iss.input === undefined ? 'nothing' : JSON.stringify(iss.input)})`,
      })
      // For the JSON Schema only (editors): the parser below is what validates.
      .meta({ description: what, ...(pattern ? { pattern } : {}) })
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
      })
  );
}

export const DAY_MS = 86_400_000;
export const duration = (min = 0, max = DAY_MS) =>
  unit(
    'a duration such as 500ms, 2s or 1m',
    parseDuration,
    (ms) =>
      ms < min
        ? `must be at least ${min} ms (got ${ms} ms)`
        : ms > max
          ? `must be at most ${max / 1000} s (got ${ms / 1000} s)`
          : undefined,
    UNIT_PATTERNS.duration,
  );
export const positiveDuration = (max = DAY_MS) =>
  unit(
    'a duration such as 500ms, 2s or 1m',
    parseDuration,
    (ms) =>
      ms <= 0
        ? 'must be greater than zero'
        : ms > max
          ? `must be at most ${max / 1000} s (got ${ms / 1000} s)`
          : undefined,
    UNIT_PATTERNS.duration,
  );
/** The range an absolute rate must be in (undefined when it is). */
const perSecondRange = (perS: number): string | undefined =>
  perS <= 0 || perS > 1_000_000
    ? `must be greater than 0/s and at most 1000000/s (got ${perS}/s)`
    : undefined;
export const rate = unit(
  'a rate such as 280/s or 70% capacity',
  parseRate,
  (r) =>
    'perS' in r
      ? perSecondRange(r.perS)
      : r.capacityFraction <= 0 || r.capacityFraction > 100
        ? `must be greater than 0% and at most 10000% of capacity`
        : undefined,
  UNIT_PATTERNS.rate,
);
/** An absolute rate (280/s, 600/m), never a fraction of capacity: a measured figure such as a production peak. */
export const absoluteRate = unit(
  'an absolute rate such as 300/s',
  parseRate,
  (r) =>
    'perS' in r
      ? perSecondRange(r.perS)
      : 'must be an absolute rate such as 300/s, not a fraction of capacity',
  String.raw`^\s*\d+(?:\.\d+)?\s*/\s*(?:s|m)\s*$`,
);
export const fraction = unit(
  'a percentage such as 10%',
  parsePercent,
  (f) => (f < 0 || f > 1 ? 'must be between 0% and 100%' : undefined),
  UNIT_PATTERNS.percent,
);
export const multiple = unit(
  'a multiple such as 5x',
  parseMultiple,
  (k) => (k <= 0 || k > 1000 ? 'must be greater than 0x and at most 1000x' : undefined),
  UNIT_PATTERNS.multiple,
);
export const int = (min: number, max: number) =>
  z
    .number({ error: 'expected a whole number' })
    .int('expected a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** A distribution of durations: { dist, mean, sigma } as written; lognormal needs sigma. */
export const durationDist = z
  .strictObject({
    dist: z.enum(['constant', 'exponential', 'lognormal']),
    mean: positiveDuration(600_000),
    /** lognormal only: standard deviation in log space */
    sigma: z.number().positive().max(10).optional(),
  })
  .superRefine((d, ctx) => {
    if (d.dist === 'lognormal' && d.sigma === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['sigma'],
        message: 'a lognormal distribution needs sigma (e.g. 0.5)',
      });
    if (d.dist !== 'lognormal' && d.sigma !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['sigma'],
        message: `sigma only applies to lognormal, not ${d.dist}`,
      });
  });

/** The bench's form of a declared duration distribution. */
export function toDurationDist(d: z.output<typeof durationDist>): DurationDist {
  return d.dist === 'lognormal'
    ? { dist: 'lognormal', meanMs: d.mean, sigma: d.sigma ?? 1 }
    : { dist: d.dist, meanMs: d.mean };
}
