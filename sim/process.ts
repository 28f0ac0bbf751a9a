import type { Alarm } from '../foundation/clock.js';
import { runTimerFn, type SimClock, type TimerFn, type TimerHost } from './clock.js';

export type ProcessState = 'up' | 'paused' | 'down';

/**
 * One simulated process (the api, redis, postgres) as the triggers see it. Everything
 * that happens inside it (a timer firing, a reply arriving on one of its sockets) goes
 * through `at` or `deliver`, so that
 *
 * - while it is paused (SIGSTOP, `docker pause`) nothing happens in it: events that
 *   fall due are kept, and on resume they run at once, in order, each as its own event
 *   (as Node's timers fire late after a SIGCONT, and wall-clock waits such as
 *   pg_sleep or statement_timeout end as soon as the process runs again);
 * - when it is killed, everything it had pending is forgotten (a new epoch), and when
 *   it starts again it starts from nothing.
 */
export class SimProcess implements TimerHost {
  state: ProcessState = 'up';
  private epoch = 0;
  private frozen: { epoch: number; fn: TimerFn; host: TimerHost }[] = [];
  /** The host of the timers `wrapped` sets: each runs as `wrap(fn)` (no closure a timer for it). */
  private readonly wrapHost: TimerHost | undefined;

  /**
   * `wrap` runs each of `wrapped`'s timers; `wrapsAlarms`: it takes Alarms as well as
   * functions (TimerFn), and `wrappedAlarm` may be used.
   */
  constructor(name: string, clock: SimClock, wrap?: (fn: () => void) => void, wrapsAlarms?: false);
  constructor(name: string, clock: SimClock, wrap: (fn: TimerFn) => void, wrapsAlarms: true);
  constructor(
    readonly name: string,
    private readonly clock: SimClock,
    wrap?: ((fn: TimerFn) => void) | ((fn: () => void) => void),
    private readonly wrapsAlarms = false,
  ) {
    if (wrap) {
      // Given an Alarm only when it takes them (wrappedAlarm checks `wrapsAlarms`).
      const w = wrap as (fn: TimerFn) => void;
      const host: TimerHost = { runTimer: (epoch, fn) => this.run(epoch, fn, host, w) };
      this.wrapHost = host;
    }
  }

  now(): number {
    return this.clock.now();
  }

  /**
   * Runs `fn` inside the process at `atMs` (later if it is paused then; never if it dies
   * first). The returned cancel only stops a timer that has not fallen due.
   */
  at(atMs: number, fn: () => void): () => void {
    return this.clock.timerIn(atMs, fn, this, this.epoch);
  }

  /**
   * As `at`, the callback run as the constructor's `wrap(fn)` when it falls due (or,
   * paused, on resume); `cancellable` false: nothing to cancel it with (none is made).
   */
  wrapped(atMs: number, fn: () => void, cancellable: false): undefined;
  wrapped(atMs: number, fn: () => void, cancellable: true): () => void;
  wrapped(atMs: number, fn: () => void, cancellable: boolean): (() => void) | undefined {
    const host = this.wrapHost;
    if (!host) throw new Error(`process ${this.name} has no wrap for its timers`);
    if (cancellable) return this.clock.timerIn(atMs, fn, host, this.epoch);
    this.clock.schedule(atMs, fn, host, this.epoch);
    return undefined;
  }

  /** As `wrapped` (not cancellable), calling `target.onAlarm()`: no closure made. */
  wrappedAlarm(atMs: number, target: Alarm): void {
    const host = this.wrapHost;
    if (!host || !this.wrapsAlarms) throw new Error(`process ${this.name} has no wrap for its alarms`);
    this.clock.schedule(atMs, target, host, this.epoch);
  }

  /** Runs `fn` inside the process now (an event arriving from outside): deferred while paused. */
  deliver(fn: () => void): void {
    this.runTimer(this.epoch, fn);
  }

  /** A token that says whether the process is still the same incarnation. */
  get incarnation(): number {
    return this.epoch;
  }

  /** A timer of `at` falls due (called by the clock). */
  runTimer(epoch: number, fn: TimerFn): void {
    this.run(epoch, fn, this, undefined);
  }

  /** A timer of `host` (this or the wrapping one) falls due. */
  private run(epoch: number, fn: TimerFn, host: TimerHost, wrap: ((fn: TimerFn) => void) | undefined): void {
    if (epoch !== this.epoch || this.state === 'down') return;
    if (this.state === 'paused') this.frozen.push({ epoch, fn, host });
    else if (wrap) wrap(fn);
    else runTimerFn(fn);
  }

  pause(): void {
    if (this.state === 'up') this.state = 'paused';
  }

  resume(): void {
    if (this.state !== 'paused') return;
    this.state = 'up';
    const due = this.frozen;
    this.frozen = [];
    const now = this.clock.now();
    for (const d of due) this.clock.timerIn(now, d.fn, d.host, d.epoch);
  }

  /** Dies with everything pending; stays down until `start`. */
  kill(): void {
    this.state = 'down';
    this.epoch++;
    this.frozen = [];
  }

  start(): void {
    if (this.state !== 'down') return;
    this.state = 'up';
    this.epoch++;
  }
}
