/**
 * Server-side shedding decided when a worker picks a request up (its sojourn in the
 * queue is known then). Each policy answers the reason to reject, or undefined to
 * serve. All times are ms on one monotonic clock.
 */
export type RejectReason = 'queue_full' | 'concurrency' | 'queue_time' | 'codel' | 'deadline' | 'timeout';

export interface PickupShedder {
  /** Called once per dequeued request, in dequeue order. */
  onPickup(sojournMs: number, nowMs: number): RejectReason | undefined;
}

/** Rejects every request that waited longer than a fixed limit. */
export class QueueTimeShedder implements PickupShedder {
  constructor(private readonly limitMs: number) {
    if (!(limitMs > 0)) throw new RangeError(`queue-time limit must be > 0 ms (got ${limitMs})`);
  }

  onPickup(sojournMs: number): RejectReason | undefined {
    return sojournMs > this.limitMs ? 'queue_time' : undefined;
  }
}

/**
 * CoDel-style shedding on the *minimum* queueing delay over an interval (the "adaptive
 * LIFO + CoDel" of Facebook's Fail at Scale, after Nichols & Jacobson): a queue whose
 * minimum sojourn over the last interval stayed above `targetMs` never emptied, so it
 * is a standing queue, not a burst. While that holds the queue-time limit is the short
 * `targetMs`; otherwise bursts are tolerated up to `intervalMs`. The state is judged at
 * each interval's end from the sojourns seen during it.
 */
export class CodelShedder implements PickupShedder {
  private intervalStartMs: number | undefined;
  private minSojournMs = Infinity;
  private overloaded = false;

  constructor(
    private readonly targetMs: number,
    private readonly intervalMs: number,
  ) {
    if (!(targetMs > 0 && intervalMs > targetMs))
      throw new RangeError(`codel needs 0 < target < interval (got ${targetMs} ms, ${intervalMs} ms)`);
  }

  /** True while the last full interval's minimum sojourn exceeded the target. */
  get standingQueue(): boolean {
    return this.overloaded;
  }

  onPickup(sojournMs: number, nowMs: number): RejectReason | undefined {
    if (this.intervalStartMs === undefined) this.intervalStartMs = nowMs;
    else if (nowMs - this.intervalStartMs >= this.intervalMs) {
      this.overloaded = this.minSojournMs > this.targetMs;
      this.minSojournMs = Infinity;
      this.intervalStartMs = nowMs;
    }
    if (sojournMs < this.minSojournMs) this.minSojournMs = sojournMs;
    const limitMs = this.overloaded ? this.targetMs : this.intervalMs;
    return sojournMs > limitMs ? 'codel' : undefined;
  }

  /** The queue ran empty: by definition its minimum delay in this interval is 0. */
  onIdle(): void {
    this.minSojournMs = 0;
  }
}
