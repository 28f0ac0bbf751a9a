import { z } from 'zod';
import { SHAPE_NAMES, shapeFields, shapeOf } from '../arrivals/index.js';
import { absoluteRate, fraction, int, positiveDuration } from '../../../foundation/fields.js';

/**
 * load: the arrival process (open loop unless `closedLoop` is given) and the workload
 * mix. The offered rate has exactly one shape: `rate` (flat), `phases` (segments with a
 * rate or a linear ramp from → to), `waves` (sinusoidal), `onOff` (bursty, two-state
 * Markov-modulated Poisson) or `replay` (a recorded trace). Rates are absolute (280/s)
 * or a fraction of the lab's capacity (70% capacity).
 */
const keyDist = z.discriminatedUnion('dist', [
  z.strictObject({ dist: z.literal('uniform'), keys: int(1, 1_000_000_000) }),
  z.strictObject({
    dist: z.literal('zipf'),
    keys: int(1, 1_000_000_000),
    exponent: z.number().positive().max(10),
  }),
]);

const requestClass = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'use lower-case letters, digits, "_" and "-"'),
  share: fraction,
  method: z.enum(['GET', 'POST', 'PUT', 'DELETE']).default('GET'),
  path: z
    .string()
    .regex(/^\/[^\s]*$/, 'a path starting with /')
    .default('/work'),
  /** request body size in bytes */
  body: int(0, 16 * 1024 * 1024).default(0),
  key: keyDist.optional(),
  /** a cost class declared in lab.api.costs */
  cost: z.string().max(40).optional(),
  /** streamed answers (SSE) only: this share of the class's origins is cancelled by the user after `afterTokens` tokens */
  cancel: z.strictObject({ share: fraction, afterTokens: int(1, 1_000_000) }).optional(),
  /**
   * Deprecated: per-class thresholds live in hypothesis.classes. Still read: spec/deprecated.ts
   * translates each limit x into "<= x" there, with a warning, and drops this field.
   */
  thresholds: z
    .strictObject({
      p95: positiveDuration(600_000).optional(),
      errorRatio: fraction.optional(),
      ttftP95: positiveDuration(600_000).optional(),
    })
    .meta({
      deprecated: true,
      description:
        'Deprecated: write hypothesis.classes.<name>: { p95: "<= 300ms", errorRatio: "<= 0.1%", ttftP95: "<= 1500ms" }',
    })
    .optional(),
});

/** The alternative shapes of the offered load, in the registry's order (arrivals/index.ts). */
export const RATE_SHAPES = SHAPE_NAMES;

export const load = z
  .strictObject({
    /** The inter-arrival law of the open loop: Poisson (default) or evenly spaced. */
    arrival: z.enum(['poisson', 'constant']).default('poisson'),
    // One optional field per shape (arrivals/); exactly one is given (checked below).
    ...shapeFields(),
    mix: z.array(requestClass).min(1).max(100).optional(),
    /**
     * The highest rate production has seen (e.g. over the last 90 days), an absolute
     * rate: `metabench calibrate` reports the margin saturation point / this peak.
     */
    productionPeak: absoluteRate.optional(),
  })
  .superRefine((l, ctx) => {
    const given = RATE_SHAPES.filter((k) => l[k] !== undefined);
    if (given.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message:
          given.length === 0
            ? `give the offered load as one of: ${RATE_SHAPES.join(', ')}`
            : `give only one of ${given.join(', ')} (they are alternative shapes of the load)`,
      });
    for (const k of given) {
      const poissonOnly = shapeOf(k).poissonOnly;
      if (poissonOnly && l.arrival === 'constant')
        ctx.addIssue({ code: 'custom', path: ['arrival'], message: poissonOnly });
    }
    if (l.mix) {
      const total = l.mix.reduce((a, c) => a + c.share, 0);
      if (Math.abs(total - 1) > 1e-6)
        ctx.addIssue({
          code: 'custom',
          path: ['mix'],
          message: `the shares must sum to 100% (they sum to ${+(total * 100).toFixed(4)}%)`,
        });
      const names = new Set<string>();
      l.mix.forEach((c, i) => {
        if (names.has(c.name))
          ctx.addIssue({ code: 'custom', path: ['mix', i, 'name'], message: `"${c.name}" is used twice` });
        names.add(c.name);
      });
    }
  });

export type LoadSpec = z.output<typeof load>;
