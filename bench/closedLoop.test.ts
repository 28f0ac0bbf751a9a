import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../foundation/clock.js';
import { driveClosed } from './closedLoop.js';
import { policyEnv, stack, viaTransport } from './policy/ClientPolicy.js';
import { observe } from './policy/observe.js';
import { Recorder } from './record/Recorder.js';
import { seededRng } from '../foundation/rng.js';
import { ScriptedTransport } from '../test/helpers/fakeTransport.js';

test('a closed loop sends less when the service stalls, and its response times hide the stall', async () => {
  const clock = new VirtualClock();
  // 10 ms per request, except that nothing is answered between 2 s and 3 s.
  const transport = new ScriptedTransport(clock, () => {
    const now = clock.now();
    return now >= 2000 && now < 3000 ? 3000 - now + 10 : 10;
  });
  const recorder = new Recorder({ windows: [{ name: 'all', startMs: 0, endMs: 10_000 }] });
  const dispatch = stack([observe(recorder)], viaTransport(transport, clock), policyEnv(clock, seededRng(1)));
  const done = driveClosed({
    clock,
    users: 10,
    think: { dist: 'constant', meanMs: 90 },
    rng: seededRng(2),
    dispatch,
    recorder,
    endMs: 5000,
    deadlineMs: Infinity,
    drainMs: 1000,
  });
  await clock.runUntilIdle();
  await done;
  const r = recorder.close();
  const o = r.series.offered;
  // 10 users × (10 ms + 90 ms think) = 100/s while healthy.
  assert.ok(o[0]! >= 95 && o[0]! <= 105, `healthy second: ${o[0]}`);
  // During the stall each user is stuck on one request: at most 10 are offered, not 100.
  assert.ok(o[2]! <= 10, `stalled second: ${o[2]}`);
  assert.equal(r.totals.offered, r.totals.recorded);
  // Only 10 requests (one per user) saw the stall, so the p99 barely moves...
  const all = r.windows['all']!;
  assert.ok(all.response.p99! < 1000, `closed-loop p99 ${all.response.p99}`);
  // ...and response time equals service time: the intended time is the moment of sending.
  assert.equal(all.response.max, all.service.max);
  assert.equal(r.totals.lateSends, 0);
});
