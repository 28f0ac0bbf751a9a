import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../foundation/clock.js';
import { seededRng } from '../foundation/rng.js';
import { flatArrivals } from '../test/helpers/arrivals.js';
import { ScriptedTransport } from '../test/helpers/fakeTransport.js';
import { drive } from './driver.js';
import { policyEnv, stack, viaTransport } from './policy/ClientPolicy.js';
import { observe } from './policy/observe.js';
import { Recorder } from './record/Recorder.js';

/** Ten origins at 100/s (one every 10 ms) through a 5 ms service, with `sendDelays` imposed. */
async function driveLate(sendDelays: ArrayLike<number> | undefined) {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, () => 5);
  const recorder = new Recorder({ lateness: true });
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', 100, 0, 100),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 1000,
    maxLagMs: 1000,
    ...(sendDelays ? { sendDelays } : {}),
  });
  await clock.runUntilIdle();
  await done;
  return { recorded: recorder.close(), transport };
}

test('the driver sends each first attempt as late as sendDelays says, in intended order, and the Recorder keeps each lag by origin', async () => {
  // Origin 3 is 25 ms late (sent at 55 ms): origin 4, due at 40 ms, waits behind it, as
  // the lab's generator sends in order. Origin 8 is given up (beyond maxLagMs), origin 9
  // has no delay (beyond the array).
  const delays = [0, 2, Number.NaN, 25, 0, 0, 0, 0, 5000];
  const { recorded, transport } = await driveLate(delays);
  assert.deepEqual(
    transport.sent.map((a) => a.origin.id),
    [0, 1, 2, 3, 4, 5, 6, 7, 9],
  );
  assert.deepEqual(transport.sentAtMs, [0, 12, 20, 55, 55, 55, 60, 70, 90]);
  // Each origin keeps its intended time.
  assert.deepEqual(
    transport.sent.map((a) => a.origin.intendedMs),
    [0, 10, 20, 30, 40, 50, 60, 70, 90],
  );
  assert.equal(recorded.totals.outcomes.unsent, 1);
  assert.deepEqual([...recorded.lateness!], [0, 2, 0, 25, 15, 5, 0, 0, Number.POSITIVE_INFINITY, 0]);
  // The same lags as the schedule-lag histogram's.
  assert.equal(recorded.scheduleLag.samples, 9);
  assert.ok(Math.abs(recorded.scheduleLag.max! - 25) < 0.1);
});

test('without sendDelays nothing changes, and a Recorder not asked keeps no lags', async () => {
  const { transport } = await driveLate(undefined);
  assert.deepEqual(transport.sentAtMs, [0, 10, 20, 30, 40, 50, 60, 70, 80, 90]);
  assert.equal(new Recorder({}).close().lateness, undefined);
});
