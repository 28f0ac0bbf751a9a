import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import type { ClientPolicy, PolicyEnv } from './ClientPolicy.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

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

/** An origin whose user may give up: at the end of its patience it aborts what is below. */
class PatientOrigin implements AttemptHandler, InFlight {
  private below: InFlight = SETTLED;
  private gaveUpMs = -1;
  private done = false;
  private readonly cancel: () => void;

  constructor(
    next: Dispatch,
    private readonly env: PolicyEnv,
    patienceMs: number,
    first: Attempt,
    private readonly handler: AttemptHandler,
  ) {
    this.cancel = env.clock.timer(first.origin.intendedMs + patienceMs, () => this.giveUp());
    const below = next(first, this);
    if (!this.done) this.below = below;
  }

  // Answered once the layers below have settled, so every attempt is recorded before the outcome.
  onResponse(r: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    this.cancel();
    this.below = SETTLED;
    const at = this.gaveUpMs;
    this.handler.onResponse(at >= 0 ? { ...r, kind: 'abandoned', status: 0, endMs: at } : r);
  }

  abort(): void {
    this.below.abort();
  }

  private giveUp(): void {
    if (this.done) return;
    this.gaveUpMs = this.env.clock.now();
    this.below.abort();
  }
}
