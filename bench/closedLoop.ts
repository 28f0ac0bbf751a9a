import type { AbortSignalLike } from '../foundation/abortSignal.js';
import { setMaxListeners } from 'node:events';
import { isEventTarget } from './abort.js';
import type { Clock } from '../foundation/clock.js';
import { sampleDuration, type DurationDist } from '../foundation/distributions.js';
import type { Origin } from './outcome.js';
import { sendOf, type Dispatch } from './policy/dispatch.js';
import type { Recorder } from './record/Recorder.js';
import type { Rng } from '../foundation/rng.js';
import type { WorkloadMix } from './workload/mix.js';

export interface ClosedLoopOptions {
  readonly clock: Clock;
  /** Virtual users, each with one request outstanding at most. */
  readonly users: number;
  readonly think: DurationDist;
  readonly rng: Rng;
  readonly dispatch: Dispatch;
  readonly recorder: Recorder;
  readonly endMs: number;
  readonly deadlineMs: number;
  readonly drainMs: number;
  readonly stop?: AbortSignalLike;
  readonly mix?: WorkloadMix;
}

/**
 * The closed loop, for comparison only: N virtual users each send a request, wait for
 * its outcome, think, and send the next. A user's "intended time" is the moment it
 * decides to send, so a slow system simply receives fewer requests and its response
 * times look like service times: the coordinated omission that the open loop avoids.
 * Users start staggered over one mean think time so they do not all fire at t = 0.
 */
export async function driveClosed(o: ClosedLoopOptions): Promise<void> {
  const { clock, recorder } = o;
  const run = new AbortController();
  setMaxListeners(0, run.signal);
  if (isEventTarget(o.stop)) setMaxListeners(0, o.stop);
  let id = 0;
  const stopAt = (): boolean => clock.now() >= o.endMs || (o.stop?.aborted ?? false);
  let nextTickMs = 1000;
  // A user awaits each request: the comparison loop keeps its promise per origin.
  const send = sendOf(o.dispatch);

  const user = async (u: number): Promise<void> => {
    await clock.sleepUntil((u / o.users) * o.think.meanMs, o.stop);
    while (!stopAt()) {
      const t = clock.now();
      while (t >= nextTickMs) {
        recorder.tick(nextTickMs);
        nextTickMs += 1000;
      }
      const origin: Origin = o.mix
        ? { id: id++, intendedMs: t, deadlineMs: t + o.deadlineMs, request: o.mix.next() }
        : { id: id++, intendedMs: t, deadlineMs: t + o.deadlineMs };
      recorder.offered(origin);
      const r = await send({ origin, number: 1 }, run.signal);
      recorder.outcome(
        origin,
        run.signal.aborted && r.kind !== 'ok' ? { ...r, kind: 'abandoned-at-end', endMs: clock.now() } : r,
      );
      if (stopAt()) break;
      await clock.sleepUntil(clock.now() + sampleDuration(o.think, o.rng), o.stop);
    }
  };

  const users = Array.from({ length: o.users }, (_, u) => user(u));
  // Users finish their last request; past the drain, what is still out is abandoned.
  const all = Promise.all(users);
  await new Promise<void>((resolve) => {
    const cancel = clock.timer(o.endMs + o.drainMs, resolve);
    void all.then(() => {
      cancel();
      resolve();
    });
    o.stop?.addEventListener('abort', () => resolve(), { once: true });
  });
  run.abort();
  await all;
  recorder.tick(clock.now());
}
