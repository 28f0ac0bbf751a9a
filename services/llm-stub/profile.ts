import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { SpecError } from '../../foundation/errors.js';
import { duration, fraction, multiple, positiveDuration } from '../../foundation/fields.js';
import { parseYamlFile, readSpecFile, toSpecIssues } from '../../foundation/yamlFile.js';

/**
 * A latency profile: what a provider looks like from the client's side, as a versioned
 * file that says when and from what its numbers were collected (a profile without its
 * provenance is a number nobody can check). Durations are written with units (`250ms`).
 */

/** Lognormal jitter or pacing, parameterised by its mean (sigma in log space). */
const lognormal = z.strictObject({
  mean: positiveDuration(600_000),
  sigma: z.number().positive().max(5),
});

const isoDate = z
  .union([z.string(), z.date()])
  .transform((v) => (v instanceof Date ? v.toISOString().slice(0, 10) : v))
  .pipe(z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date such as 2026-12-01'));

export const profileSchema = z.strictObject({
  /** Version of this file's format; the only one is 1. */
  version: z.literal(1, { error: 'the only profile format version is 1' }),
  name: z.string().min(1),
  collected: z.strictObject({
    date: isoDate,
    /** measured: from calls to a real provider; synthetic: chosen, modelled on published figures. */
    method: z.enum(['measured', 'synthetic']),
    source: z.string().min(1),
  }),
  /** The model named in answers when the request names none. */
  model: z.string().min(1),
  systemFingerprint: z.string().min(1),
  /** Prompt + completion tokens above this get 400 context_length_exceeded. */
  contextWindow: z.number().int().positive(),
  ttft: z.strictObject({
    /** Network and scheduling floor, paid by every request. */
    floor: duration(0, 600_000),
    /** Prefill: this much per 1000 prompt tokens. */
    prefillPer1kTokens: duration(0, 600_000),
    jitter: lognormal,
  }),
  tokens: z.strictObject({
    /** The gap between successive output tokens. */
    gap: lognormal,
  }),
  output: z
    .strictObject({
      dist: z.enum(['constant', 'lognormal']),
      /** Mean output length in tokens (before max_tokens caps it). */
      mean: z.number().positive(),
      sigma: z.number().positive().max(5).optional(),
      min: z.number().int().min(1).default(1),
      max: z.number().int().min(1).default(4096),
    })
    .superRefine((o, ctx) => {
      if (o.dist === 'lognormal' && o.sigma === undefined)
        ctx.addIssue({ code: 'custom', path: ['sigma'], message: 'a lognormal length needs sigma' });
      if (o.min > o.max)
        ctx.addIssue({ code: 'custom', path: ['min'], message: `must not exceed max (${o.max})` });
    }),
  /** A fraction of requests lands on a slow path: their TTFT and token gaps are multiplied. */
  tail: z.strictObject({
    fraction,
    ttftFactor: multiple,
    tokenFactor: multiple,
  }),
  embeddings: z.strictObject({
    model: z.string().min(1),
    dimensions: z.number().int().min(1).max(16_384),
    floor: duration(0, 600_000),
    perKTokens: duration(0, 600_000),
    jitter: lognormal,
  }),
  rateLimits: z.strictObject({
    requestsPerMinute: z.number().int().positive(),
    tokensPerMinute: z.number().int().positive(),
    /** Sent as Retry-After (whole seconds, rounded up) and retry-after-ms on an injected 429. */
    retryAfter: duration(0, 60_000),
  }),
});

export type Profile = z.output<typeof profileSchema>;

/** The profile shipped with metabench (services/llm-stub/profiles/default.yaml). */
export const DEFAULT_PROFILE = fileURLToPath(
  new URL('../../../services/llm-stub/profiles/default.yaml', import.meta.url),
);

/** Reads and validates a profile file; throws SpecError naming the file, line and field. */
export function loadProfile(file: string = DEFAULT_PROFILE): Profile {
  const y = parseYamlFile(readSpecFile(file), file, 'a latency profile');
  const r = profileSchema.safeParse(y.data, { reportInput: true });
  if (!r.success) throw new SpecError(toSpecIssues(r.error.issues, y.doc, y.lines, file, [], profileSchema));
  return r.data;
}
