import { setMaxListeners } from 'node:events';
import type { Clock } from './clock.js';
import type { ArrivalProcess } from './arrival/ArrivalProcess.js';
import type { Origin } from './outcome.js';
import type { SendAttempt } from './policy/ClientPolicy.js';
import type { Recorder } from './record/Recorder.js';

export interface DriveOptions {
  readonly clock: Clock;
  readonly arrivals: ArrivalProcess;
  /** The top of the client-policy stack. */
  readonly send: SendAttempt;
  readonly recorder: Recorder;
  /** Client deadline per origin, ms after its intended time (Infinity: none). */
  readonly deadlineMs: number;
  /** After the last arrival, how long in-flight origins may still finish before they are abandoned. */
  readonly drainMs: number;
  /** Stops the schedule early (Ctrl-C, an error elsewhere): no further origins are created. */
  readonly stop?: AbortSignal;
}

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
  const { clock, arrivals, send, recorder } = opts;
  // Each origin gets its own AbortController, aborted when the run ends. One signal
  // shared by every in-flight origin would carry thousands of listeners, and adding or
  // removing a listener costs O(listeners): during a storm that alone starves the loop.
  const live = new Set<AbortController>();
  let ended = false;
  if (opts.stop) setMaxListeners(0, opts.stop);
  let inFlight = 0;
  let drained: (() => void) | undefined;

  const settle = (origin: Origin, ctl: AbortController, p: ReturnType<SendAttempt>): void => {
    p.then((r) => {
      live.delete(ctl);
      recorder.outcome(
        origin,
        ended && r.kind !== 'ok' ? { ...r, kind: 'abandoned-at-end', endMs: clock.now() } : r,
      );
      if (--inFlight === 0 && drained) drained();
    });
  };

  let nextTickMs = 1000;
  let id = 0;
  for (let t = arrivals.next(); t !== undefined; t = arrivals.next()) {
    if (opts.stop?.aborted) break;
    if (t > clock.now()) {
      await clock.sleepUntil(t, opts.stop);
      if (opts.stop?.aborted) break;
    }
    while (clock.now() >= nextTickMs) {
      recorder.tick(nextTickMs);
      nextTickMs += 1000;
    }
    const origin: Origin = { id: id++, intendedMs: t, deadlineMs: t + opts.deadlineMs };
    recorder.offered(origin);
    inFlight++;
    const ctl = new AbortController();
    live.add(ctl);
    settle(origin, ctl, send({ origin, number: 1 }, ctl.signal));
  }

  if (inFlight > 0 && !opts.stop?.aborted) {
    await new Promise<void>((resolve) => {
      drained = resolve;
      clock.timer(clock.now() + opts.drainMs, resolve);
      opts.stop?.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  if (inFlight > 0) {
    await new Promise<void>((resolve) => {
      drained = resolve;
      ended = true;
      for (const ctl of live) ctl.abort();
    });
  }
  recorder.tick(clock.now());
}
