import type { Rng } from '../../foundation/rng.js';

/**
 * The wait before a retry, as an immutable value (cockatiel's idea): `next()` returns
 * a new Backoff and never changes this one, so concurrent origins never share retry
 * state. A policy starts from the value a factory returns (its `delayMs` is unused)
 * and calls `next(rng)` before each retry.
 */
export interface Backoff {
  /** Milliseconds to wait before this retry. */
  readonly delayMs: number;
  /** The backoff for the following retry; jitter is drawn from `rng`. */
  next(rng: Rng): Backoff;
}

export type Jitter = 'none' | 'full' | 'equal' | 'decorrelated';

/** No wait: the retry-storm client. */
export function immediate(): Backoff {
  const b: Backoff = { delayMs: 0, next: () => b };
  return b;
}

/** The same wait before every retry. */
export function fixed(delayMs: number): Backoff {
  checkMs('delayMs', delayMs);
  const b: Backoff = { delayMs, next: () => b };
  return { delayMs: 0, next: () => b };
}

export interface ExponentialOptions {
  /** Wait before the first retry (before jitter), ms. */
  readonly baseMs: number;
  /** No wait is longer than this, ms. */
  readonly capMs: number;
  /**
   * Brooker, "Exponential Backoff And Jitter" (AWS, 2015), with t = min(cap, base·2^i)
   * for the i-th retry (i from 0):
   *   none          t
   *   full          U(0, t)
   *   equal         t/2 + U(0, t/2)
   *   decorrelated  min(cap, U(base, 3·previous)), previous starting at base
   */
  readonly jitter: Jitter;
}

/** Exponential backoff with a cap and one of Brooker's jitters. */
export function exponential(opts: ExponentialOptions): Backoff {
  checkMs('baseMs', opts.baseMs);
  checkMs('capMs', opts.capMs);
  if (opts.capMs < opts.baseMs)
    throw new RangeError(`capMs (${opts.capMs}) must be >= baseMs (${opts.baseMs})`);
  const { baseMs, capMs, jitter } = opts;
  const at = (i: number, prevMs: number, delayMs: number): Backoff => ({
    delayMs,
    next(rng) {
      const t = Math.min(capMs, baseMs * 2 ** i);
      let d: number;
      switch (jitter) {
        case 'none':
          d = t;
          break;
        case 'full':
          d = rng.next() * t;
          break;
        case 'equal':
          d = t / 2 + rng.next() * (t / 2);
          break;
        case 'decorrelated':
          d = Math.min(capMs, baseMs + rng.next() * (3 * prevMs - baseMs));
          break;
      }
      return at(i + 1, d, d);
    },
  });
  return at(0, baseMs, 0);
}

function checkMs(name: string, v: number): void {
  if (!(v >= 0) || !Number.isFinite(v))
    throw new RangeError(`${name} must be a finite number >= 0 (got ${v})`);
}
