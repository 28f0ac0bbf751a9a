import { clearAlarm, setAlarm, type Alarm, type Clock } from '../../foundation/clock.js';
import type { Attempt, AttemptResult } from '../outcome.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './dispatch.js';

/**
 * What is below a layer, cut short by a timer: when it fires first, the layer aborts what
 * is below and, once that answers, reports the answer as `cutShort` makes it (the attempt
 * timeout's `timeout`, the impatient user's `abandoned`). The layer below may answer
 * inside `next` or inside `abort`; the answer passes up exactly once.
 */
export abstract class CutShort implements AttemptHandler, InFlight, Alarm {
  private below: InFlight = SETTLED;
  private firedAtMs = -1;
  private done = false;
  /** The timer's handle until it rings or is cancelled (an alarm: no closure an attempt). */
  private alarm = -1;

  protected constructor(
    private readonly clock: Clock,
    private readonly handler: AttemptHandler,
  ) {}

  /** What the answer becomes when the timer fired at `firedAtMs`, before it. */
  protected abstract cutShort(r: AttemptResult, firedAtMs: number): AttemptResult;

  /** The timer first (an answer inside `next` cancels it), then the attempt below. */
  protected start(next: Dispatch, attempt: Attempt, atMs: number): void {
    this.alarm = setAlarm(this.clock, atMs, this);
    const below = next(attempt, this);
    if (!this.done) this.below = below;
  }

  onResponse(r: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    if (this.alarm >= 0) clearAlarm(this.clock, this.alarm, this);
    this.alarm = -1;
    this.below = SETTLED;
    const at = this.firedAtMs;
    this.handler.onResponse(at >= 0 ? this.cutShort(r, at) : r);
  }

  abort(): void {
    this.below.abort();
  }

  /** The timer fired first. */
  onAlarm(): void {
    this.alarm = -1;
    if (this.done) return;
    this.firedAtMs = this.clock.now();
    this.below.abort();
  }
}
