import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import type { AttemptResult, Origin } from '../outcome.js';
import { ImmediateDispatch, ScriptedDispatch } from '../../test/helpers/dispatchFake.js';
import { breaker, CircuitBreaker, SamplingBreaker, type BreakerPass } from './breaker.js';
import { stack, policyEnv } from './ClientPolicy.js';
import { sendOf } from './dispatch.js';
import type { BreakerState, PolicyEvent } from './events.js';

const OK = { kind: 'ok', status: 200 } as const;
const TIMEOUT = { kind: 'timeout', status: 0 } as const;

function setup(o = { failureRatio: 0.5, windowMs: 10_000, minVolume: 10 }, openMs = 5000, probes = 2) {
  const clock = new VirtualClock();
  const changes: [BreakerState, BreakerState, number][] = [];
  const b = new CircuitBreaker(new SamplingBreaker(o), { openMs, probes }, clock, (f, t, at) =>
    changes.push([f, t, at]),
  );
  /** One attempt through the breaker with result `r`; false when refused. */
  const call = (r: Pick<AttemptResult, 'kind' | 'status'>): boolean => {
    const p = b.tryPass();
    if (!p) return false;
    b.onResult(p, r);
    return true;
  };
  return { clock, b, changes, call };
}

test('closed: opens on the failure ratio only once the window holds the minimum volume', async () => {
  const { b, call } = setup();
  // 9 failures: 100% failed but below the minimum volume of 10.
  for (let i = 0; i < 9; i++) call(TIMEOUT);
  assert.equal(b.state, 'closed');
  call(TIMEOUT); // the 10th
  assert.equal(b.state, 'open');
  assert.equal(b.opens, 1);
});

test('closed: a ratio below the threshold keeps it closed; at the threshold it opens', () => {
  const { b, call } = setup({ failureRatio: 0.5, windowMs: 10_000, minVolume: 10 });
  // 6 successes, 4 failures: 40%.
  for (let i = 0; i < 6; i++) call(OK);
  for (let i = 0; i < 4; i++) call(TIMEOUT);
  assert.equal(b.state, 'closed');
  // One more failure: 5 of 11 = 45%; another: 6 of 12 = 50% opens.
  call(TIMEOUT);
  assert.equal(b.state, 'closed');
  call(TIMEOUT);
  assert.equal(b.state, 'open');
});

test('closed: failures older than the sliding window no longer count', async () => {
  const { clock, b, call } = setup({ failureRatio: 0.5, windowMs: 10_000, minVolume: 10 });
  for (let i = 0; i < 9; i++) call(TIMEOUT);
  await clock.advanceTo(11_000); // those 9 have left the window
  for (let i = 0; i < 9; i++) call(OK);
  call(TIMEOUT); // 1 of 10 in the window
  assert.equal(b.state, 'closed');
  // Without the expiry it would have been 10 of 19 failed: open.
});

test('4xx other than 429 and cancelled attempts are not failures; 5xx, shed, conn errors and 429 are', () => {
  const { b, call } = setup({ failureRatio: 1, windowMs: 10_000, minVolume: 3 });
  call({ kind: 'http-4xx', status: 400 });
  call({ kind: 'http-4xx', status: 404 });
  call({ kind: 'cancelled', status: 0 });
  call({ kind: 'http-5xx', status: 500 });
  call({ kind: 'http-5xx', status: 500 });
  assert.equal(b.state, 'closed'); // 2 of 4 counted attempts failed (the cancelled one is not counted)
  const c = setup({ failureRatio: 1, windowMs: 10_000, minVolume: 4 });
  c.call({ kind: 'shed', status: 503 });
  c.call({ kind: 'conn-refused', status: 0 });
  c.call({ kind: 'http-4xx', status: 429 });
  c.call({ kind: 'conn-reset', status: 0 });
  assert.equal(c.b.state, 'open');
});

test('open refuses everything, half-opens exactly openMs later, and probes close it', async () => {
  const { clock, b, call, changes } = setup(undefined, 5000, 2);
  await clock.advanceTo(1000);
  for (let i = 0; i < 10; i++) call(TIMEOUT);
  assert.equal(b.state, 'open');
  await clock.advanceTo(5999);
  assert.equal(b.tryPass(), undefined);
  assert.equal(b.state, 'open');
  await clock.advanceTo(6000);
  assert.equal(b.state, 'half-open');
  // Half-open: 2 probes at a time, the rest refused.
  const p1 = b.tryPass();
  const p2 = b.tryPass();
  assert.ok(p1?.probe && p2?.probe);
  assert.equal(b.tryPass(), undefined);
  b.onResult(p1!, OK);
  assert.equal(b.state, 'half-open'); // one success of the two needed
  b.onResult(p2!, OK);
  assert.equal(b.state, 'closed');
  assert.deepEqual(changes, [
    ['closed', 'open', 1000],
    ['open', 'half-open', 6000],
    ['half-open', 'closed', 6000],
  ]);
  // Closed again with a clean window: 9 failures do not reopen it.
  for (let i = 0; i < 9; i++) call(TIMEOUT);
  assert.equal(b.state, 'closed');
});

test('a failed probe reopens it for another openMs', async () => {
  const { clock, b, call, changes } = setup(undefined, 2000, 3);
  for (let i = 0; i < 10; i++) call(TIMEOUT);
  await clock.advanceTo(2000);
  assert.equal(b.state, 'half-open');
  const p = b.tryPass()!;
  await clock.advanceTo(2500);
  b.onResult(p, TIMEOUT);
  assert.equal(b.state, 'open');
  assert.equal(b.opens, 2);
  await clock.advanceTo(4499);
  assert.equal(b.state, 'open');
  await clock.advanceTo(4500);
  assert.equal(b.state, 'half-open');
  assert.deepEqual(
    changes.map((c) => c.slice(1)),
    [
      ['open', 0],
      ['half-open', 2000],
      ['open', 2500],
      ['half-open', 4500],
    ],
  );
});

test('results of attempts admitted in an earlier state are ignored; a cancelled probe frees its slot', async () => {
  const { clock, b, call } = setup(undefined, 1000, 1);
  const stale: BreakerPass = b.tryPass()!; // admitted while closed
  for (let i = 0; i < 10; i++) call(TIMEOUT);
  await clock.advanceTo(1000);
  assert.equal(b.state, 'half-open');
  b.onResult(stale, TIMEOUT); // belongs to the closed period: no effect on half-open
  assert.equal(b.state, 'half-open');
  const probe = b.tryPass()!;
  assert.equal(b.tryPass(), undefined); // the single probe slot is taken
  b.onResult(probe, { kind: 'cancelled', status: 0 });
  assert.equal(b.state, 'half-open');
  assert.ok(b.tryPass()?.probe, 'the slot is free again');
});

test('as a policy: a refused attempt is never sent, comes back as breaker-open and is reported', async () => {
  const clock = new VirtualClock();
  const events: PolicyEvent[] = [];
  const transport = new ScriptedDispatch(
    clock,
    () => 10,
    () => 'http-5xx',
  );
  // Opens on the second failure: every attempt failed, and the window holds two.
  const opensOnSecond = new SamplingBreaker({ failureRatio: 1, windowMs: 10_000, minVolume: 2 });
  const cb = new CircuitBreaker(opensOnSecond, { openMs: 1000, probes: 1 }, clock);
  const send = sendOf(
    stack(
      [breaker(cb)],
      transport.dispatch,
      policyEnv(clock, seededRng(1), { client: 3, emit: (e) => events.push(e) }),
    ),
  );
  const origin: Origin = { id: 9, intendedMs: 0, deadlineMs: Infinity };
  const results: AttemptResult[] = [];
  for (let n = 1; n <= 3; n++) {
    const p = send({ origin, number: n }, new AbortController().signal);
    await clock.runUntilIdle(clock.now() + 10);
    results.push(await p);
  }
  assert.deepEqual(
    results.map((r) => r.kind),
    ['http-5xx', 'http-5xx', 'breaker-open'],
  );
  assert.equal(transport.sent.length, 2);
  assert.equal(results[2]!.endMs - results[2]!.sentMs, 0); // fails fast
  assert.deepEqual(events, [{ type: 'rejected', client: 3, origin: 9, number: 3, by: 'breaker', atMs: 20 }]);
});

test('re-entrant: answers and refusals inside dispatch are counted once and passed up at once', () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => 'http-5xx');
  const opensOnSecond = new SamplingBreaker({ failureRatio: 1, windowMs: 10_000, minVolume: 2 });
  const cb = new CircuitBreaker(opensOnSecond, { openMs: 1000, probes: 1 }, clock);
  const d = breaker(cb)(below.dispatch, policyEnv(clock, seededRng(1)));
  const origin: Origin = { id: 9, intendedMs: 0, deadlineMs: Infinity };
  const got: string[] = [];
  for (let n = 1; n <= 3; n++) {
    const inFlight = d({ origin, number: n }, { onResponse: (r) => got.push(r.kind) });
    assert.equal(got.length, n, 'answered inside dispatch');
    inFlight.abort(); // settled: nothing happens
  }
  assert.deepEqual(got, ['http-5xx', 'http-5xx', 'breaker-open']);
  assert.equal(below.sent.length, 2);
  assert.equal(below.aborted, 0);
  assert.equal(cb.opens, 1);
});

test('re-entrant: a probe cancelled inside its abort frees the half-open slot at once', async () => {
  const clock = new VirtualClock();
  const cb = new CircuitBreaker(
    new SamplingBreaker({ failureRatio: 1, windowMs: 10_000, minVolume: 1 }),
    { openMs: 1000, probes: 1 },
    clock,
  );
  const p = cb.tryPass()!;
  cb.onResult(p, TIMEOUT);
  await clock.advanceTo(1000);
  assert.equal(cb.state, 'half-open');
  const below = new ImmediateDispatch(clock, () => undefined, 'cancelled');
  const d = breaker(cb)(below.dispatch, policyEnv(clock, seededRng(1)));
  const origin: Origin = { id: 9, intendedMs: 0, deadlineMs: Infinity };
  const got: string[] = [];
  const probe = d({ origin, number: 1 }, { onResponse: (r) => got.push(r.kind) });
  d({ origin, number: 2 }, { onResponse: (r) => got.push(r.kind) });
  assert.deepEqual(got, ['breaker-open']); // the one slot is taken
  probe.abort();
  assert.deepEqual(got, ['breaker-open', 'cancelled']);
  assert.equal(cb.state, 'half-open');
  d({ origin, number: 3 }, { onResponse: (r) => got.push(r.kind) });
  assert.equal(below.sent.length, 2, 'the freed slot admits the next probe');
});
