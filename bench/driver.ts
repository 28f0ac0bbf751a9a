import type { AbortSignalLike } from '../foundation/abortSignal.js';
import { setMaxListeners } from 'node:events';
import { isEventTarget } from './abort.js';
import { clearAlarm, setAlarm, type Alarm, type Clock } from '../foundation/clock.js';
import type { ArrivalProcess } from './arrival/ArrivalProcess.js';
import type { AttemptResult, Origin } from './outcome.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './policy/dispatch.js';
import type { Recorder } from './record/Recorder.js';
import { LiveSet } from './liveSet.js';
import type { WorkloadMix } from './workload/mix.js';

export interface DriveOptions {
  readonly clock: Clock;
  readonly arrivals: ArrivalProcess;
  /** The top of the client-policy stack. */
  readonly dispatch: Dispatch;
  readonly recorder: Recorder;
  /** Client deadline per origin, ms after its intended time (Infinity: none). */
  readonly deadlineMs: number;
  /** After the last arrival, how long in-flight origins may still finish before they are abandoned. */
  readonly drainMs: number;
  /** Stops the schedule early (Ctrl-C, an error elsewhere): no further origins are created. */
  readonly stop?: AbortSignalLike;
  /** Gives each origin its request class and key; every origin gets the transport's default request without it. */
  readonly mix?: WorkloadMix;
  /**
   * The most a first attempt may lag its intended time before the generator gives it up
   * as `unsent` (default 5 s). An overloaded generator then still ends on time, and says
   * how much of the offered load it failed to apply, instead of running on for ever.
   */
  readonly maxLagMs?: number;
  /** The first origin's id (default 0); successive drives on one Recorder (a step test) keep ids unique. */
  readonly firstOriginId?: number;
  /**
   * The send tick, ms (default 0: every origin wakes the driver at its own intended
   * time). With a tick, the driver wakes at most once per tick and sends every arrival
   * due by then in one batch, as wrk2 does: never before its intended time, at most a
   * tick after it. Real-time runs use SEND_TICK_MS; a wake-up costs tens of
   * microseconds of CPU, a request not much more.
   */
  readonly sendTickMs?: number;
  /**
   * Lateness to impose, by origin id: each origin's first attempt is sent this many ms
   * after its intended time (a lateness replay, orchestrator/run/replay.ts, gives the lab
   * run's recorded lags to the simulation). NaN or beyond the array: on time; above
   * `maxLagMs`: never sent (`unsent`), as the lab's generator gave it up. Origins are
   * still sent in intended order, as the generator sends them. The origin keeps its
   * intended time (response time and deadline are from it).
   */
  readonly sendDelays?: ArrayLike<number>;
}

/**
 * Real-time runs' send tick: half the late-send threshold (DESIGN.md §2: 1 ms), so a
 * batched send is never late for the batching alone. At 5 000 origins/s it cuts the
 * driver's wake-ups from one per origin to about 1 800 a second.
 */
export const SEND_TICK_MS = 0.5;

export const DEFAULT_MAX_LAG_MS = 5000;
/** Sends in a row, when behind the schedule, before the driver lets I/O run. */
const BURST = 16;

/**
 * The open-loop driver. It walks the arrival schedule, sleeping until each intended
 * time, and starts each origin without waiting for earlier ones: the system under
 * test cannot slow the load down. When it wakes late it sends at once; the lag is
 * recorded by the Recorder as schedule lag and late sends.
 *
 * Every origin created gets exactly one outcome: when the schedule ends, in-flight
 * origins have `drainMs` to finish, then they are aborted and recorded as
 * `abandoned-at-end`.
 */
export function drive(opts: DriveOptions): Promise<void> {
  return new Promise<void>((resolve, reject) => new Schedule(opts, resolve, reject).resume());
}

/** What the driver waits for when it is not running: nothing, a sleep, a yield to I/O, the drain. */
const enum Waiting {
  None,
  Sleep,
  Yield,
  Drain,
}

/**
 * The schedule's walk as a state machine on clock timers, not an async loop: a wait
 * is one alarm (the clock calls `onAlarm`, which resumes the walk), where an `await
 * sleepUntil` cost a promise, its closures and a stop listener per arrival. The order of
 * events is the loop's: a woken walk runs right after its timer, as the awaiting loop did
 * in the microtask right after it.
 */
class Schedule implements Alarm {
  private readonly run: DriveState;
  private readonly stop: AbortSignalLike | undefined;
  private readonly maxLagMs: number;
  private readonly tickMs: number;
  private readonly delays: ArrayLike<number> | undefined;
  /** The next bucket boundary to tick. */
  private nextTickMs: number;
  private id: number;
  private burst = 0;
  /** The earliest the driver wakes again: one wake-up per tick, whatever the rate. */
  private nextWakeMs = Number.NEGATIVE_INFINITY;
  private waiting = Waiting.None;
  /** The arrival the walk waits to send (its intended and send times). */
  private t = 0;
  private sendAt = 0;
  /** The sleep's alarm until it rings (-1: none). */
  private sleepAlarm = -1;
  private finished = false;
  /** The callbacks a wait resumes through, made once. */
  private readonly wake = (): void => this.resume();
  private readonly onStop = (): void => this.stopped();
  private readonly drainOver = (): void => this.afterDrain();

  constructor(
    private readonly opts: DriveOptions,
    private readonly resolve: () => void,
    private readonly reject: (e: unknown) => void,
  ) {
    const clock = opts.clock;
    // Each origin is one dispatch with its own handler, kept in `live` until it answers, so
    // the run's end aborts exactly what is still out (no shared signal with a listener per
    // origin: adding or removing one costs O(listeners), which during a storm starves the loop).
    this.run = new DriveState(clock, opts.recorder);
    this.stop = opts.stop;
    if (isEventTarget(opts.stop)) setMaxListeners(0, opts.stop);
    // The next bucket boundary after now: a drive that starts mid-run (a step test's next
    // step) does not re-tick the buckets before it.
    this.nextTickMs = (Math.floor(clock.now() / 1000) + 1) * 1000;
    this.id = opts.firstOriginId ?? 0;
    this.maxLagMs = opts.maxLagMs ?? DEFAULT_MAX_LAG_MS;
    this.tickMs = opts.sendTickMs ?? 0;
    this.delays = opts.sendDelays;
    this.stop?.addEventListener('abort', this.onStop, { once: true });
  }

  /** The sleep is over. */
  onAlarm(): void {
    this.sleepAlarm = -1;
    this.resume();
  }

  /** Goes on from where the walk stopped (its start, a sleep, a yield); an exception rejects the drive. */
  resume(): void {
    try {
      this.walk();
    } catch (e) {
      this.finished = true;
      this.stop?.removeEventListener('abort', this.onStop);
      this.reject(e);
    }
  }

  private walk(): void {
    const { opts, run, stop } = this;
    const { clock, arrivals, dispatch, recorder } = opts;
    const maxLagMs = this.maxLagMs;
    for (;;) {
      let t: number;
      let sendAt: number;
      const waited = this.waiting;
      if (waited === Waiting.Sleep || waited === Waiting.Yield) {
        this.waiting = Waiting.None;
        t = this.t;
        sendAt = this.sendAt;
        if (stop?.aborted) return this.end();
        if (waited === Waiting.Sleep) this.nextWakeMs = clock.now() + this.tickMs;
      } else {
        const next = arrivals.next();
        if (next === undefined) return this.end();
        t = next;
        if (stop?.aborted) return this.end();
        // When to send: the intended time, or later by the lateness imposed on this origin.
        sendAt = t;
        const delays = this.delays;
        if (delays !== undefined && this.id < delays.length) {
          const d = delays[this.id]!;
          if (d > maxLagMs)
            sendAt = Number.NEGATIVE_INFINITY; // given up by the lab's generator: unsent below
          else if (d > 0) sendAt = t + d;
        }
        if (sendAt > clock.now()) {
          this.burst = 0;
          this.t = t;
          this.sendAt = sendAt;
          this.waiting = Waiting.Sleep;
          this.sleepAlarm = setAlarm(clock, sendAt > this.nextWakeMs ? sendAt : this.nextWakeMs, this);
          return;
        } else if (++this.burst >= BURST && clock.yieldToIo) {
          // Behind the schedule: sending on without reading a response would open a
          // connection per send, which puts the generator further behind.
          this.burst = 0;
          this.t = t;
          this.sendAt = sendAt;
          this.waiting = Waiting.Yield;
          void clock.yieldToIo().then(this.wake);
          return;
        }
      }
      while (clock.now() >= this.nextTickMs) {
        recorder.tick(this.nextTickMs);
        this.nextTickMs += 1000;
      }
      if (clock.now() - t > maxLagMs || sendAt === Number.NEGATIVE_INFINITY) {
        // Too late to be this origin's send: count it, never send it.
        const request = opts.mix?.next(); // keep the class sequence the same as if it had been sent
        const o: Origin = request
          ? { id: this.id++, intendedMs: t, deadlineMs: t + opts.deadlineMs, request }
          : { id: this.id++, intendedMs: t, deadlineMs: t + opts.deadlineMs };
        recorder.offered(o);
        recorder.outcome(o, {
          kind: 'unsent',
          status: 0,
          sentMs: clock.now(),
          endMs: clock.now(),
          attempt: 0,
        });
        continue;
      }
      const origin: Origin = opts.mix
        ? { id: this.id++, intendedMs: t, deadlineMs: t + opts.deadlineMs, request: opts.mix.next() }
        : { id: this.id++, intendedMs: t, deadlineMs: t + opts.deadlineMs };
      recorder.offered(origin);
      new OriginInFlight(run, origin).send(dispatch);
    }
  }

  /** The stop signal aborted: a sleep ends at once (the walk then ends, after this event). */
  private stopped(): void {
    if (this.waiting === Waiting.Sleep) {
      if (this.sleepAlarm >= 0) clearAlarm(this.opts.clock, this.sleepAlarm, this);
      this.sleepAlarm = -1;
      queueMicrotask(this.wake);
    } else if (this.waiting === Waiting.Drain) queueMicrotask(this.drainOver);
  }

  /** The schedule is over: in-flight origins get `drainMs` to finish, unless the run was stopped. */
  private end(): void {
    const { run, opts } = this;
    if (run.live.size > 0 && !this.stop?.aborted) {
      const clock = opts.clock;
      this.waiting = Waiting.Drain;
      const cancel = clock.timer(clock.now() + opts.drainMs, this.drainOver);
      // The last origin's answer comes from deep inside the stack: the walk goes on after it.
      run.drained = () => {
        cancel();
        queueMicrotask(this.drainOver);
      };
      return;
    }
    this.afterDrain();
  }

  /** The drain is over (or skipped): what is still out is aborted, and the drive ends once it answered. */
  private afterDrain(): void {
    if (this.finished) return;
    this.finished = true;
    this.waiting = Waiting.None;
    this.stop?.removeEventListener('abort', this.onStop);
    const run = this.run;
    if (run.live.size === 0) return this.done();
    run.drained = () => queueMicrotask(() => this.done());
    run.ended = true;
    try {
      // An origin may answer inside abort (and leave `live`), or make another answer: one
      // that answered before its turn is not aborted.
      for (const o of run.live.values()) if (o.liveSlot >= 0) o.abort();
    } catch (e) {
      this.reject(e);
    }
  }

  private done(): void {
    this.opts.recorder.tick(this.opts.clock.now());
    this.resolve();
  }
}

/** What the origins of one drive share. */
class DriveState {
  /** The origins not yet answered. */
  readonly live = new LiveSet<OriginInFlight>();
  /** Set once the drain is over: what answers from now on was abandoned at the end. */
  ended = false;
  /** Called when the last live origin answers, once the schedule is over. */
  drained: (() => void) | undefined;

  constructor(
    readonly clock: Clock,
    readonly recorder: Recorder,
  ) {}
}

/** One origin, from its dispatch to its outcome. */
class OriginInFlight implements AttemptHandler {
  private below: InFlight = SETTLED;
  private done = false;
  /** Its slot in the drive's `live`. */
  liveSlot = -1;

  constructor(
    private readonly run: DriveState,
    private readonly origin: Origin,
  ) {}

  send(dispatch: Dispatch): void {
    // Live before the dispatch: the stack may answer inside it.
    this.run.live.add(this);
    const below = dispatch({ origin: this.origin, number: 1 }, this);
    if (!this.done) this.below = below;
  }

  onResponse(r: AttemptResult): void {
    if (this.done) return;
    this.done = true;
    this.below = SETTLED;
    const run = this.run;
    run.live.delete(this);
    run.recorder.outcome(
      this.origin,
      run.ended && r.kind !== 'ok' ? { ...r, kind: 'abandoned-at-end', endMs: run.clock.now() } : r,
    );
    if (run.live.size === 0 && run.drained) run.drained();
  }

  abort(): void {
    this.below.abort();
  }
}
