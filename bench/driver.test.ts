import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock, type Clock } from '../foundation/clock.js';
import { flatArrivals } from '../test/helpers/arrivals.js';
import { drive } from './driver.js';
import { policyEnv, stack, viaTransport } from './policy/ClientPolicy.js';
import { observe } from './policy/observe.js';
import { retry } from './policy/retry.js';
import { attemptTimeout } from './policy/timeout.js';
import { Recorder } from './record/Recorder.js';
import { seededRng } from '../foundation/rng.js';
import { profiledArrivals } from './arrival/profiled.js';
import { RateProfile } from './arrival/profile.js';
import { WorkloadMix } from './workload/mix.js';
import { ScriptedTransport } from '../test/helpers/fakeTransport.js';

/** A service that answers in 10 ms, except that it stops answering between 2 s and 3 s. */
function stallingService(clock: VirtualClock) {
  return new ScriptedTransport(clock, () => {
    const now = clock.now();
    return now >= 2000 && now < 3000 ? 3000 - now + 10 : 10;
  });
}

async function runDrive(policyMaxAttempts: number, timeoutMs: number) {
  const clock = new VirtualClock();
  const transport = stallingService(clock);
  const recorder = new Recorder({ windows: [{ name: 'all', startMs: 0, endMs: 10_000 }] });
  const env = policyEnv(clock, seededRng(3));
  const dispatch = stack(
    [retry({ maxAttempts: policyMaxAttempts }), observe(recorder), attemptTimeout(timeoutMs)],
    viaTransport(transport, clock),
    env,
  );
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', 100, 0, 5000),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 5000,
  });
  await clock.runUntilIdle();
  await done;
  return { recorded: recorder.close(), transport };
}

test('open loop: a stalled service does not slow the schedule, and response time counts from the intended time', async () => {
  const { recorded } = await runDrive(1, 5000);
  assert.equal(recorded.totals.offered, 500);
  assert.equal(recorded.totals.recorded, 500);
  // Every second offered exactly 100, stall or not.
  assert.deepEqual(recorded.series.offered.slice(0, 5), [100, 100, 100, 100, 100]);
  assert.equal(
    recorded.series.offered.slice(5).reduce((a, b) => a + b, 0),
    0,
  );
  // Requests intended at 2.00 s waited until 3.01 s: ~1 s response time although each
  // attempt's service time was at most ~1 s too; a closed loop would have sent fewer.
  const all = recorded.windows['all']!;
  assert.ok(all.response.max! >= 1009 && all.response.max! <= 1011, `max ${all.response.max}`);
  assert.equal(recorded.totals.lateSends, 0);
  assert.equal(recorded.scheduleLag.max, 0.001);
});

test('immediate retries multiply attempts during the stall; amplification is attempts / intended', async () => {
  const { recorded, transport } = await runDrive(4, 200);
  assert.equal(recorded.totals.offered, 500);
  assert.equal(recorded.totals.recorded, 500);
  const s = recorded.series;
  // Outside the stall one attempt per origin. Inside it an origin is tried every 200 ms,
  // up to 4 times: those intended in [2.0, 2.4) s send all 4 in the stall second, the
  // next 0.2 s three, and so on: 100 + 80 + 60 + 40 = 280 attempts for 100 origins.
  assert.equal(s.attempts[0], 100);
  assert.equal(s.attempts[2], 280);
  assert.equal(transport.sent.length, recorded.totals.attempts);
  assert.ok(recorded.totals.outcomes.timeout > 0);
  assert.equal(recorded.totals.outcomes.ok + recorded.totals.outcomes.timeout, 500);
});

test('origins still in flight after the drain are recorded as abandoned-at-end', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, (a) => (a.origin.intendedMs >= 900 ? Infinity : 5));
  const recorder = new Recorder({});
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', 10, 0, 1000),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 100,
  });
  await clock.runUntilIdle();
  await done;
  const r = recorder.close();
  assert.equal(r.totals.offered, 10);
  assert.equal(r.totals.recorded, 10);
  assert.equal(r.totals.outcomes['abandoned-at-end'], 1);
  assert.equal(r.totals.outcomes.ok, 9);
  // Its attempt was cancelled by the run's end, not timed out.
  assert.equal(r.totals.attemptOutcomes.cancelled, 1);
  assert.equal(r.totals.policies.cancelledAttempts, 1);
});

test('a stop signal ends the schedule early and still records every origin', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, () => 50);
  const recorder = new Recorder({});
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const stop = new AbortController();
  clock.timer(500, () => stop.abort());
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', 100, 0, 10_000),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 1000,
    stop: stop.signal,
  });
  await clock.runUntilIdle();
  await done;
  const r = recorder.close();
  assert.ok(r.totals.offered >= 50 && r.totals.offered <= 52, `offered ${r.totals.offered}`);
  assert.equal(r.totals.recorded, r.totals.offered);
});

test('a generator that falls more than maxLag behind gives origins up as unsent and still ends on time', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, () => 5);
  const recorder = new Recorder({});
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const arrivals = flatArrivals('constant', 100, 0, 5000);
  const done = drive({
    clock,
    arrivals,
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 100,
    maxLagMs: 500,
  });
  await clock.advanceTo(999);
  // The clock jumps 2 s while the generator is not running (as if blocked).
  clock.jumpTo(3000);
  await clock.runUntilIdle();
  await done;
  const r = recorder.close();
  assert.equal(r.totals.offered, 500);
  assert.equal(r.totals.recorded, 500);
  // Origins intended in [1.0, 2.5) s were more than 500 ms late by 3 s: never sent.
  assert.equal(r.totals.outcomes.unsent, 150);
  assert.equal(transport.sent.length, 350);
});

test('successive drives on one Recorder (a step test): origin ids go on, earlier buckets keep their in-flight counts, classes and the success log are kept', async () => {
  const clock = new VirtualClock();
  // Class 1 (heavy) takes 300 ms, class 0 takes 10 ms.
  const transport = new ScriptedTransport(clock, (a) => (a.origin.request?.cls === 1 ? 300 : 10));
  const lines: { e: string; origin?: number }[] = [];
  const recorder = new Recorder(
    { classes: ['light', 'heavy'], retainFromMs: 0 },
    { write: (e) => lines.push(e as { e: string }), close: () => Promise.resolve() },
  );
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const mix = new WorkloadMix(
    [
      { name: 'light', share: 0.5, method: 'GET', path: '/work', bodyBytes: 0 },
      { name: 'heavy', share: 0.5, method: 'GET', path: '/work', bodyBytes: 0, cost: 'heavy' },
    ],
    (c) => seededRng(1, `k${c}`),
  );
  const step = async (startMs: number, ratePerS: number, firstOriginId: number) => {
    const done = drive({
      clock,
      arrivals: profiledArrivals(
        new RateProfile([{ durationMs: 1000, fromPerS: ratePerS, toPerS: ratePerS }], startMs),
        'constant',
        seededRng(2),
      ),
      dispatch,
      recorder,
      deadlineMs: Infinity,
      drainMs: 1000,
      mix,
      firstOriginId,
    });
    await clock.runUntilIdle();
    await done;
  };
  await step(0, 100, 0);
  const inFlightAfterFirst = [...recorder.peek().series.inFlight];
  await clock.advanceTo(3000);
  await step(3000, 200, 100);
  const r = recorder.close();
  // The second drive did not re-tick buckets 0-2.
  assert.deepEqual(r.series.inFlight.slice(0, inFlightAfterFirst.length), inFlightAfterFirst);
  assert.equal(r.totals.offered, 300);
  assert.deepEqual(r.series.offered.slice(0, 4), [100, 0, 0, 200]);
  // Origin ids are unique across the drives.
  const ids = lines.filter((l) => l.e === 'outcome').map((l) => l.origin);
  assert.equal(new Set(ids).size, 300);
  // Per class: half each, by intended time; heavy ones complete 300 ms later.
  assert.deepEqual(r.classes!['light']!.offered.slice(0, 4), [50, 0, 0, 100]);
  assert.deepEqual(r.classes!['heavy']!.offered.slice(0, 4), [50, 0, 0, 100]);
  assert.equal(
    r.classes!['heavy']!.goodput.reduce((a, b) => a + b, 0),
    150,
  );
  assert.equal(
    r.classes!['light']!.failed.reduce((a, b) => a + b, 0),
    0,
  );
  // The success log answers any window, per class.
  const heavy = r.successes!.latency(3000, 5000, r.classIndex!['heavy']);
  assert.equal(heavy.samples, 100);
  assert.ok(Math.abs(heavy.p99! - 300) < 1, `heavy p99 ${heavy.p99}`);
  const light = r.successes!.latency(3000, 5000, r.classIndex!['light']);
  assert.equal(light.samples, 100);
  assert.ok(Math.abs(light.max! - 10) < 0.1);
  assert.equal(r.successes!.latency(0, 10_000).samples, 300);
  assert.equal(r.successes!.latency(1500, 2900).samples, 0);
});

test('a driver behind its schedule lets I/O run between bursts of 16 sends, and sends every origin', async () => {
  const clock = new VirtualClock();
  let yields = 0;
  const behind: Clock = {
    now: () => clock.now(),
    sleepUntil: (at, signal) => clock.sleepUntil(at, signal),
    timer: (at, fn) => clock.timer(at, fn),
    yieldToIo: () => {
      yields++;
      return Promise.resolve();
    },
  };
  const transport = new ScriptedTransport(clock, () => 1);
  const recorder = new Recorder({ windows: [{ name: 'all', startMs: 0, endMs: 10_000 }] });
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  // Every one of the 100 intended times (0–99 ms) has passed when the driver starts.
  clock.jumpTo(200);
  const done = drive({
    clock: behind,
    arrivals: flatArrivals('constant', 1000, 0, 100),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 1000,
  });
  await clock.runUntilIdle();
  await done;
  assert.equal(recorder.close().totals.offered, 100);
  assert.equal(yields, Math.floor(100 / 16));
});
