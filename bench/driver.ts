import type { AbortSignalLike } from '../foundation/abortSignal.js';
import { setMaxListeners } from 'node:events';
import { isEventTarget } from './abort.js';
import type { Clock } from '../foundation/clock.js';
import type { ArrivalProcess } from './arrival/ArrivalProcess.js';
import type { AttemptResult, Origin } from './outcome.js';
import { SETTLED, type AttemptHandler, type Dispatch, type InFlight } from './policy/dispatch.js';
import type { Recorder } from './record/Recorder.js';
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
export async function drive(opts: DriveOptions): Promise<void> {
  const { clock, arrivals, dispatch, recorder } = opts;
  // Each origin is one dispatch with its own handler, kept in `live` until it answers, so
  // the run's end aborts exactly what is still out (no shared signal with a listener per
  // origin: adding or removing one costs O(listeners), which during a storm starves the loop).
  const run = new DriveState(clock, recorder);
  if (isEventTarget(opts.stop)) setMaxListeners(0, opts.stop);

  // The next bucket boundary after now: a drive that starts mid-run (a step test's next
  // step) does not re-tick the buckets before it.
  let nextTickMs = (Math.floor(clock.now() / 1000) + 1) * 1000;
  let id = opts.firstOriginId ?? 0;
  const maxLagMs = opts.maxLagMs ?? DEFAULT_MAX_LAG_MS;
  let burst = 0;
  const tickMs = opts.sendTickMs ?? 0;
  // The earliest the driver wakes again: one wake-up per tick, whatever the rate.
  let nextWakeMs = Number.NEGATIVE_INFINITY;
  const delays = opts.sendDelays;
  for (let t = arrivals.next(); t !== undefined; t = arrivals.next()) {
    if (opts.stop?.aborted) break;
    // When to send: the intended time, or later by the lateness imposed on this origin.
    let sendAt = t;
    if (delays !== undefined && id < delays.length) {
      const d = delays[id]!;
      if (d > maxLagMs)
        sendAt = Number.NEGATIVE_INFINITY; // given up by the lab's generator: unsent below
      else if (d > 0) sendAt = t + d;
    }
    if (sendAt > clock.now()) {
      burst = 0;
      await clock.sleepUntil(sendAt > nextWakeMs ? sendAt : nextWakeMs, opts.stop);
      if (opts.stop?.aborted) break;
      nextWakeMs = clock.now() + tickMs;
    } else if (++burst >= BURST && clock.yieldToIo) {
      // Behind the schedule: sending on without reading a response would open a
      // connection per send, which puts the generator further behind.
      burst = 0;
      await clock.yieldToIo();
      if (opts.stop?.aborted) break;
    }
    while (clock.now() >= nextTickMs) {
      recorder.tick(nextTickMs);
      nextTickMs += 1000;
    }
    if (clock.now() - t > maxLagMs || sendAt === Number.NEGATIVE_INFINITY) {
      // Too late to be this origin's send: count it, never send it.
      const request = opts.mix?.next(); // keep the class sequence the same as if it had been sent
      const o: Origin = request
        ? { id: id++, intendedMs: t, deadlineMs: t + opts.deadlineMs, request }
        : { id: id++, intendedMs: t, deadlineMs: t + opts.deadlineMs };
      recorder.offered(o);
      recorder.outcome(o, { kind: 'unsent', status: 0, sentMs: clock.now(), endMs: clock.now(), attempt: 0 });
      continue;
    }
    const origin: Origin = opts.mix
      ? { id: id++, intendedMs: t, deadlineMs: t + opts.deadlineMs, request: opts.mix.next() }
      : { id: id++, intendedMs: t, deadlineMs: t + opts.deadlineMs };
    recorder.offered(origin);
    new OriginInFlight(run, origin).send(dispatch);
  }

  if (run.live.size > 0 && !opts.stop?.aborted) {
    await new Promise<void>((resolve) => {
      const cancel = clock.timer(clock.now() + opts.drainMs, resolve);
      run.drained = () => {
        cancel();
        resolve();
      };
      opts.stop?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  if (run.live.size > 0) {
    await new Promise<void>((resolve) => {
      run.drained = resolve;
      run.ended = true;
      // An origin may answer inside abort, and leave `live` then: a Set's iteration allows it.
      for (const o of run.live) o.abort();
    });
  }
  recorder.tick(clock.now());
}

/** What the origins of one drive share. */
class DriveState {
  /** The origins not yet answered. */
  readonly live = new Set<OriginInFlight>();
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
