import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import { lastNumberOf, type Attempt, type AttemptResult, type OutcomeKind, type Origin } from '../outcome.js';
import { Recorder } from '../record/Recorder.js';
import { ImmediateDispatch, ScriptedDispatch } from '../../test/helpers/dispatchFake.js';
import { awsBudget } from './budget.js';
import { stack, policyEnv } from './ClientPolicy.js';
import { sendOf, type Dispatch } from './dispatch.js';
import type { ClientPolicy } from './ClientPolicy.js';
import type { PolicyEvent } from './events.js';
import { hedge } from './hedge.js';
import { observe } from './observe.js';
import { retry } from './retry.js';
import { attemptTimeout } from './timeout.js';

function setup(
  latency: (a: Attempt) => number,
  kind: (a: Attempt) => OutcomeKind = () => 'ok',
  policies: (o: ClientPolicy) => ClientPolicy[] = (o) => [hedge({ delayMs: 100 }), o, attemptTimeout(500)],
) {
  const clock = new VirtualClock();
  const transport = new ScriptedDispatch(clock, latency, kind);
  const lines: Record<string, unknown>[] = [];
  const recorder = new Recorder(
    { policies: { clients: 1, budget: false, breaker: false, throttle: false, hedge: true, abandon: false } },
    { write: (e) => lines.push(e as Record<string, unknown>), close: async () => {} },
  );
  const events: PolicyEvent[] = [];
  const env = policyEnv(clock, seededRng(1), {
    emit: (e) => {
      events.push(e);
      recorder.policy(e);
    },
  });
  const send = sendOf(stack(policies(observe(recorder)), transport.dispatch, env));
  const origin: Origin = { id: 7, intendedMs: 0, deadlineMs: Infinity };
  const go = async (signal = new AbortController().signal): Promise<AttemptResult> => {
    const p = send({ origin, number: 1 }, signal);
    await clock.runUntilIdle();
    return p;
  };
  return { clock, transport, recorder, lines, events, go };
}

test('a slow attempt gets a hedge after the delay; the first answer wins and the loser is cancelled', async () => {
  const s = setup((a) => (a.hedge ? 20 : 300));
  const r = await s.go();
  assert.equal(r.kind, 'ok');
  assert.equal(r.attempt, 2); // the hedge's answer
  assert.equal(lastNumberOf(r), 2);
  assert.equal(r.endMs, 120);
  assert.deepEqual(s.transport.sentAtMs, [0, 100]);
  assert.deepEqual(
    s.transport.sent.map((a) => [a.number, a.hedge ?? false]),
    [
      [1, false],
      [2, true],
    ],
  );
  assert.equal(s.transport.aborted, 1); // the first attempt, cancelled at 120
  // Both are attempts in the record: the hedge marked, the loser cancelled.
  const attempts = s.lines.filter((l) => l['e'] === 'attempt');
  assert.deepEqual(
    attempts.map((l) => [l['n'], l['kind'], l['hedge'] ?? false]),
    [
      [2, 'ok', true],
      [1, 'cancelled', false],
    ],
  );
  const rec = s.recorder.close();
  assert.equal(rec.totals.attempts, 2);
  assert.equal(rec.totals.policies.hedgesSent, 1);
  assert.equal(rec.totals.policies.hedgesWon, 1);
  assert.equal(rec.totals.policies.cancelledAttempts, 1);
  assert.deepEqual(s.events, [{ type: 'hedge-won', client: 0, origin: 7, number: 2, atMs: 120 }]);
});

test('the first attempt may still win: then the hedge is the one cancelled, and nothing is won by hedging', async () => {
  const s = setup((a) => (a.hedge ? 300 : 150));
  const r = await s.go();
  assert.equal(r.attempt, 1);
  assert.equal(lastNumberOf(r), 2); // number 2 is used: a retry would be 3
  assert.equal(r.endMs, 150);
  assert.equal(s.transport.aborted, 1);
  const rec = s.recorder.close();
  assert.equal(rec.totals.policies.hedgesSent, 1);
  assert.equal(rec.totals.policies.hedgesWon, 0);
  assert.equal(rec.totals.attemptOutcomes.cancelled, 1);
});

test('an answer before the delay sends no hedge; a fast failure goes straight up', async () => {
  const fast = setup(() => 50);
  assert.equal((await fast.go()).kind, 'ok');
  assert.equal(fast.transport.sent.length, 1);
  assert.equal(fast.clock.pendingTimers, 0); // the hedge timer was cancelled
  const failing = setup(
    () => 30,
    () => 'http-5xx',
  );
  const r = await failing.go();
  assert.equal(r.kind, 'http-5xx');
  assert.equal(r.endMs, 30);
  assert.equal(failing.transport.sent.length, 1);
});

test('when both fail the try fails at the last failure, and a retry continues the numbering', async () => {
  const s = setup(
    (a) => (a.number <= 2 ? Infinity : 10),
    () => 'ok',
    (o) => [retry({ maxAttempts: 2 }), hedge({ delayMs: 100 }), o, attemptTimeout(500)],
  );
  const r = await s.go();
  // Attempt 1 at 0 and its hedge 2 at 100 both time out (at 500 and 600); the retry is 3.
  assert.deepEqual(
    s.transport.sent.map((a) => a.number),
    [1, 2, 3],
  );
  assert.deepEqual(s.transport.sentAtMs, [0, 100, 600]);
  assert.equal(r.kind, 'ok');
  assert.equal(r.attempt, 3);
  const kinds = s.lines.filter((l) => l['e'] === 'attempt').map((l) => [l['n'], l['kind']]);
  assert.deepEqual(kinds, [
    [1, 'timeout'],
    [2, 'timeout'],
    [3, 'ok'],
  ]);
});

test('with a budget, a hedge needs a token; without one it is not sent', async () => {
  const budget = awsBudget({ capacity: 5, retryCost: 5, timeoutCost: 10 });
  const s = setup(
    () => 300,
    () => 'ok',
    (o) => [hedge({ delayMs: 100, budget }), o, attemptTimeout(500)],
  );
  await s.go();
  assert.equal(s.transport.sent.length, 2); // the 5 tokens paid for one hedge
  assert.equal(budget.tokens, 0);
  await s.go();
  assert.equal(s.transport.sent.length, 3); // no token: no hedge
  assert.equal(s.events.filter((e) => e.type === 'hedge-denied').length, 1);
});

test('up to maxHedges hedges, one more every delay', async () => {
  const s = setup(
    (a) => (a.number === 3 ? 10 : 1000),
    () => 'ok',
    (o) => [hedge({ delayMs: 100, maxHedges: 3 }), o, attemptTimeout(2000)],
  );
  const r = await s.go();
  assert.deepEqual(s.transport.sentAtMs, [0, 100, 200]);
  assert.equal(r.attempt, 3);
  assert.equal(r.endMs, 210);
  assert.equal(s.transport.aborted, 2);
});

test("the caller's cancellation cancels every attempt in flight", async () => {
  const s = setup(() => Infinity);
  const ctl = new AbortController();
  s.clock.timer(250, () => ctl.abort());
  const r = await s.go(ctl.signal);
  assert.equal(r.kind, 'cancelled');
  assert.equal(s.transport.aborted, 2);
  assert.equal(s.recorder.close().totals.policies.cancelledAttempts, 2);
});

const origin7: Origin = { id: 7, intendedMs: 0, deadlineMs: Infinity };

test('re-entrant: an answer inside dispatch ends the try inside dispatch, with no hedge timer left', () => {
  const clock = new VirtualClock();
  for (const kind of ['ok', 'http-5xx'] as const) {
    const below = new ImmediateDispatch(clock, () => kind);
    const got: AttemptResult[] = [];
    const inFlight = hedge({ delayMs: 100 })(below.dispatch, policyEnv(clock, seededRng(1)))(
      { origin: origin7, number: 1 },
      { onResponse: (r) => got.push(r) },
    );
    assert.deepEqual(
      got.map((r) => [r.kind, r.attempt]),
      [[kind, 1]],
    );
    assert.equal(clock.pendingTimers, 0);
    inFlight.abort(); // settled: nothing to abort, nothing answered again
    assert.equal(got.length, 1);
    assert.equal(below.aborted, 0);
  }
});

test('re-entrant: hedges refused inside dispatch never hide the first attempt’s own failure', async () => {
  const clock = new VirtualClock();
  const slow = new ScriptedDispatch(
    clock,
    () => 300,
    () => 'http-5xx',
  );
  const refusing = new ImmediateDispatch(clock, () => 'breaker-open');
  const below: Dispatch = (a, h) => (a.hedge ? refusing.dispatch(a, h) : slow.dispatch(a, h));
  const got: AttemptResult[] = [];
  hedge({ delayMs: 100, maxHedges: 2 })(below, policyEnv(clock, seededRng(1)))(
    { origin: origin7, number: 1 },
    { onResponse: (r) => got.push(r) },
  );
  await clock.runUntilIdle();
  assert.equal(refusing.sent.length, 2); // at 100 and 200, each refused on the spot
  assert.equal(got.length, 1);
  assert.deepEqual(
    [got[0]!.kind, got[0]!.attempt, got[0]!.endMs, lastNumberOf(got[0]!)],
    ['http-5xx', 1, 300, 3],
  );
});

test('re-entrant: a loser answering inside its abort (even ok) is ignored; the winner is answered once', async () => {
  const clock = new VirtualClock();
  // The first attempt waits until aborted, then answers ok inside abort; the hedge answers ok inside dispatch.
  const below = new ImmediateDispatch(clock, (a) => (a.hedge ? 'ok' : undefined), 'ok');
  const events: PolicyEvent[] = [];
  const got: AttemptResult[] = [];
  hedge({ delayMs: 100 })(below.dispatch, policyEnv(clock, seededRng(1), { emit: (e) => events.push(e) }))(
    { origin: origin7, number: 1 },
    { onResponse: (r) => got.push(r) },
  );
  await clock.runUntilIdle();
  assert.equal(below.aborted, 1);
  assert.deepEqual(
    got.map((r) => [r.kind, r.attempt, r.endMs]),
    [['ok', 2, 100]],
  );
  assert.deepEqual(events, [{ type: 'hedge-won', client: 0, origin: 7, number: 2, atMs: 100 }]);
});

test("re-entrant: the caller's abort, answered inside abort by every leg, ends the try inside abort, once", async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => undefined, 'timeout');
  const got: AttemptResult[] = [];
  const inFlight = hedge({ delayMs: 100 })(below.dispatch, policyEnv(clock, seededRng(1)))(
    { origin: origin7, number: 1 },
    { onResponse: (r) => got.push(r) },
  );
  await clock.advanceTo(150);
  assert.equal(below.sent.length, 2);
  assert.equal(got.length, 0);
  inFlight.abort();
  assert.equal(below.aborted, 2);
  // Both failed; the last failure (the hedge's, aborted after the first) is the try's.
  assert.deepEqual(
    got.map((r) => [r.kind, r.attempt]),
    [['timeout', 2]],
  );
  inFlight.abort();
  assert.equal(got.length, 1);
  assert.equal(clock.pendingTimers, 0);
});
