import { deriveSeed, seededRng, type Rng } from '../../foundation/rng.js';

/**
 * What happens to one request, decided from the request's own seeded draw: the stub's
 * seed and the request's key (an `x-llm-stub-key` header, else its arrival number).
 * Nothing is drawn from a stream shared between requests, so the same seed and key
 * give the same fate at concurrency 1 or 50.
 */
export type Fate = 'ok' | 'rate_limit' | 'server_error' | 'context_length' | 'cut' | 'hang';

/** Each fate's share of requests (fractions; their sum is at most 1, the rest are ok). */
export interface FaultRates {
  readonly rateLimit: number;
  readonly serverError: number;
  readonly contextLength: number;
  readonly cut: number;
  readonly hang: number;
}

export const NO_FAULTS: FaultRates = { rateLimit: 0, serverError: 0, contextLength: 0, cut: 0, hang: 0 };

const ORDER: readonly (keyof FaultRates)[] = ['rateLimit', 'serverError', 'contextLength', 'cut', 'hang'];
const FATE_OF: Record<keyof FaultRates, Fate> = {
  rateLimit: 'rate_limit',
  serverError: 'server_error',
  contextLength: 'context_length',
  cut: 'cut',
  hang: 'hang',
};

/** A problem with the rates, in words, or undefined. */
export function checkRates(r: FaultRates): string | undefined {
  for (const k of ORDER)
    if (!(r[k] >= 0 && r[k] <= 1)) return `${k} must be between 0 and 1 (got ${String(r[k])})`;
  const sum = ORDER.reduce((s, k) => s + r[k], 0);
  if (sum > 1 + 1e-9) return `the fault rates add up to ${Number(sum.toFixed(6))}, more than 1`;
  return undefined;
}

export interface Decision {
  readonly fate: Fate;
  /** For a cut: the fraction (0, 1) of the answer sent before the connection is destroyed. */
  readonly cutAt: number;
}

/** The fate of the request with this key: one uniform draw against the cumulative rates. */
export function decideFate(seed: number, key: string, rates: FaultRates): Decision {
  const rng = requestRng(seed, key, 'fate');
  const u = rng.next();
  const cutAt = 0.05 + 0.9 * rng.next();
  let acc = 0;
  for (const k of ORDER) {
    acc += rates[k];
    if (u < acc) return { fate: FATE_OF[k], cutAt };
  }
  return { fate: 'ok', cutAt };
}

/** One request's own stream for one purpose (fate, latency, text), unrelated to every other. */
export function requestRng(seed: number, key: string, purpose: string): Rng {
  return seededRng(deriveSeed(seed, key), purpose);
}
