import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import type { ClientPolicy } from './ClientPolicy.js';

export interface AbandonOptions {
  /** The fraction of users (origins) who may give up, 0..1. */
  readonly fraction: number;
  /** How long such a user waits from the intended time before giving up. */
  readonly patience: DurationDist;
}

/**
 * Abandonment: a fraction of users gives up after a patience drawn per origin. When
 * the patience runs out first, everything still in flight for the origin is cancelled
 * (its attempts are recorded as `cancelled`), no further retry or hedge is sent, and
 * the origin's outcome is `abandoned`, at the moment the user gave up. Outermost in
 * the stack: the user does not care which policy was still busy.
 */
export function abandon(o: AbandonOptions): ClientPolicy {
  if (!(o.fraction >= 0 && o.fraction <= 1))
    throw new RangeError(`fraction must be in [0, 1] (got ${o.fraction})`);
  return (next, env) => async (first, signal) => {
    if (o.fraction === 0 || env.rng.next() >= o.fraction) return next(first, signal);
    const patienceMs = sampleDuration(o.patience, env.rng);
    const ctl = env.newController?.() ?? new AbortController();
    let gaveUpMs = -1;
    const cancel = env.clock.timer(first.origin.intendedMs + patienceMs, () => {
      gaveUpMs = env.clock.now();
      ctl.abort();
    });
    const onOuterAbort = (): void => ctl.abort();
    signal.addEventListener('abort', onOuterAbort, { once: true });
    try {
      // Waits for the layers below to settle so every attempt is recorded before the outcome.
      const r = await next(first, ctl.signal);
      return gaveUpMs >= 0 ? { ...r, kind: 'abandoned', status: 0, endMs: gaveUpMs } : r;
    } finally {
      cancel();
      signal.removeEventListener('abort', onOuterAbort);
    }
  };
}
