import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng, type Rng } from '../../foundation/rng.js';
import type { Origin } from '../outcome.js';
import { ScriptedDispatch } from '../../test/helpers/dispatchFake.js';
import { stack, policyEnv } from './ClientPolicy.js';
import { sendOf } from './dispatch.js';
import type { PolicyEvent } from './events.js';
import { AdaptiveThrottle, throttle } from './throttle.js';

const never: Rng = { next: () => 0.999999 };

/** A throttle that has seen `requests` attempts, `accepts` of them accepted. */
function primed(k: number, requests: number, accepts: number, windowMs = 120_000) {
  const clock = new VirtualClock();
  const t = new AdaptiveThrottle({ k, windowMs }, clock);
  for (let i = 0; i < requests; i++) {
    assert.ok(t.tryPass(never));
    t.onResult(i < accepts ? { kind: 'ok', status: 200 } : { kind: 'timeout', status: 0 });
  }
  return { clock, t };
}

test('the SRE formula: p = max(0, (requests - K accepts) / (requests + 1)) at known accept ratios', () => {
  for (const [accepts, p] of [
    [100, 0],
    [60, 0],
    [50, 0], // exactly 1/K accepted: not yet
    [40, 20 / 101],
    [20, 60 / 101],
    [0, 100 / 101],
  ] as const) {
    const { t } = primed(2, 100, accepts);
    assert.ok(
      Math.abs(t.rejectProbability() - p) < 1e-12,
      `K 2, ${accepts}% accepted: ${t.rejectProbability()} vs ${p}`,
    );
  }
  // K = 1.5 with 60% accepted refuses about 10% (the 3GPP restatement in the SRE notes).
  const { t } = primed(1.5, 100, 60);
  assert.ok(Math.abs(t.rejectProbability() - 10 / 101) < 1e-12);
});

test('refusals happen at the formula rate (seeded draws)', () => {
  // A large history so that the trials barely move p: 100000 requests, 20000 accepted.
  const { t } = primed(2, 100_000, 20_000);
  const p0 = t.rejectProbability();
  assert.ok(Math.abs(p0 - 0.6) < 1e-4);
  const rng = seededRng(5);
  const trials = 4000;
  let refused = 0;
  for (let i = 0; i < trials; i++) if (!t.tryPass(rng)) refused++;
  // Every trial is a request without an accept: p drifts from 0.6 to (104000 - 40000) / 104001.
  const pEnd = (104_000 - 40_000) / 104_001;
  const expected = (p0 + pEnd) / 2;
  const sd = Math.sqrt((expected * (1 - expected)) / trials);
  assert.ok(Math.abs(refused / trials - expected) < 4 * sd, `refused ${refused / trials} vs ${expected}`);
  assert.equal(t.rejected, refused);
});

test('refused requests still count as requests; accepts are ok or plain 4xx answers, not 429 or cancelled', () => {
  const { t } = primed(2, 10, 0);
  const before = t.rejectProbability(); // 10 / 11
  const always: Rng = { next: () => 0 };
  assert.equal(t.tryPass(always), false);
  assert.ok(t.rejectProbability() > before); // 11 / 12
  const c = primed(2, 4, 0);
  c.t.onResult({ kind: 'http-4xx', status: 404 }); // the backend answered: an accept
  c.t.onResult({ kind: 'http-4xx', status: 429 });
  c.t.onResult({ kind: 'cancelled', status: 0 });
  assert.ok(Math.abs(c.t.rejectProbability() - (4 - 2) / 5) < 1e-12);
});

test('the history slides: with no traffic for a window, it stops refusing', async () => {
  const { clock, t } = primed(2, 100, 0, 10_000);
  assert.ok(t.rejectProbability() > 0.9);
  await clock.advanceTo(5000);
  assert.ok(t.rejectProbability() > 0.9);
  await clock.advanceTo(10_600); // every slice (500 ms each) of the old history has left
  assert.equal(t.rejectProbability(), 0);
});

test('as a policy: a refused attempt is never sent and comes back at once as throttled', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedDispatch(
    clock,
    () => 10,
    () => 'http-5xx',
  );
  const th = new AdaptiveThrottle({ k: 1, windowMs: 60_000 }, clock);
  const events: PolicyEvent[] = [];
  const send = sendOf(
    stack(
      [throttle(th)],
      transport.dispatch,
      policyEnv(clock, seededRng(2), { emit: (e) => events.push(e) }),
    ),
  );
  const origin: Origin = { id: 1, intendedMs: 0, deadlineMs: Infinity };
  const kinds: string[] = [];
  for (let n = 1; n <= 200; n++) {
    const p = send({ origin, number: n }, new AbortController().signal);
    await clock.runUntilIdle(clock.now() + 10);
    kinds.push((await p).kind);
  }
  const refused = kinds.filter((k) => k === 'throttled').length;
  // Nothing is accepted: p = n / (n + 1) climbs towards 1, so almost everything is refused.
  assert.ok(refused > 150, `refused ${refused}`);
  assert.equal(transport.sent.length, 200 - refused);
  assert.equal(events.filter((e) => e.type === 'rejected' && e.by === 'throttle').length, refused);
  assert.equal(kinds[0], 'http-5xx'); // the first one always goes (p = 0)
});
