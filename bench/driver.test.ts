import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from './clock.js';
import { constantArrivals } from './arrival/constant.js';
import { drive } from './driver.js';
import { policyEnv, stack, viaTransport } from './policy/ClientPolicy.js';
import { observe } from './policy/observe.js';
import { retry } from './policy/retry.js';
import { attemptTimeout } from './policy/timeout.js';
import { Recorder } from './record/Recorder.js';
import { seededRng } from './rng.js';
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
  const send = stack(
    [retry({ maxAttempts: policyMaxAttempts }), observe(recorder), attemptTimeout(timeoutMs)],
    viaTransport(transport, clock),
    env,
  );
  const done = drive({
    clock,
    arrivals: constantArrivals(100, 0, 5000),
    send,
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
  const send = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const done = drive({
    clock,
    arrivals: constantArrivals(10, 0, 1000),
    send,
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
  const send = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const stop = new AbortController();
  clock.timer(500, () => stop.abort());
  const done = drive({
    clock,
    arrivals: constantArrivals(100, 0, 10_000),
    send,
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
  const send = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const arrivals = constantArrivals(100, 0, 5000);
  const done = drive({ clock, arrivals, send, recorder, deadlineMs: Infinity, drainMs: 100, maxLagMs: 500 });
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
