import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { CutShort } from './cutShort.js';
import type { AttemptHandler, Dispatch } from './dispatch.js';

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
  return (next, env) => (first, handler) => {
    if (o.fraction === 0 || env.rng.next() >= o.fraction) return next(first, handler);
    return new PatientOrigin(next, env, sampleDuration(o.patience, env.rng), first, handler);
  };
}

/**
 * An origin whose user may give up: at the end of its patience it aborts what is below,
 * and answers once the layers below have settled, so every attempt is recorded before
 * the outcome.
 */
class PatientOrigin extends CutShort {
  constructor(next: Dispatch, env: PolicyEnv, patienceMs: number, first: Attempt, handler: AttemptHandler) {
    super(env.clock, handler);
    this.start(next, first, first.origin.intendedMs + patienceMs);
  }

  protected cutShort(r: AttemptResult, gaveUpMs: number): AttemptResult {
    return { ...r, kind: 'abandoned', status: 0, endMs: gaveUpMs };
  }
}
