import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import type { Attempt, AttemptResult, Origin } from '../outcome.js';
import { Recorder } from '../record/Recorder.js';
import { ScriptedTransport, type ScriptExtras } from '../../test/helpers/fakeTransport.js';
import { abandon } from './abandon.js';
import { exponential, fixed } from './backoff.js';
import { ratioBudget } from './budget.js';
import { policyEnv, stack, viaTransport, type ClientPolicy } from './ClientPolicy.js';
import { sendOf } from './dispatch.js';
import { DEADLINE_HEADER, propagateDeadline } from './deadline.js';
import type { PolicyEvent } from './events.js';
import { observe } from './observe.js';
import { isRetryable, retry, type RetryOptions } from './retry.js';
import { attemptTimeout } from './timeout.js';

function setup(latency: (n: number) => number, kind: (n: number) => AttemptResult['kind'] = () => 'ok') {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(
    clock,
    (a) => latency(a.number),
    (a) => kind(a.number),
  );
  const env = policyEnv(clock, seededRng(1));
  const seen: AttemptResult[] = [];
  const record: ClientPolicy = (next) => (a, h) =>
    next(a, {
      onResponse(r) {
        seen.push(r);
        h.onResponse(r);
      },
    });
  return { clock, transport, env, seen, record };
}

const origin = (deadlineMs = Number.POSITIVE_INFINITY): Origin => ({ id: 1, intendedMs: 0, deadlineMs });

test('the attempt timeout aborts a slow attempt at exactly its limit', async () => {
  const { clock, transport, env } = setup(() => 800);
  const send = sendOf(stack([attemptTimeout(500)], viaTransport(transport, clock), env));
  const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(r.kind, 'timeout');
  assert.equal(r.endMs, 500);
  assert.equal(transport.aborted, 1);
});

test('immediate retry re-sends at once after each timeout, up to maxAttempts in all', async () => {
  const { clock, transport, env, seen, record } = setup(() => 800);
  const send = sendOf(
    stack([retry({ maxAttempts: 4 }), record, attemptTimeout(500)], viaTransport(transport, clock), env),
  );
  const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(transport.sent.length, 4);
  assert.deepEqual(
    transport.sent.map((a) => a.number),
    [1, 2, 3, 4],
  );
  assert.deepEqual(
    seen.map((s) => s.sentMs),
    [0, 500, 1000, 1500],
  );
  assert.equal(r.kind, 'timeout');
  assert.equal(r.attempt, 4);
  assert.equal(r.endMs, 2000);
});

test('a success ends the retries', async () => {
  const { clock, transport, env } = setup((n) => (n < 3 ? 800 : 10));
  const send = sendOf(
    stack([retry({ maxAttempts: 4 }), attemptTimeout(500)], viaTransport(transport, clock), env),
  );
  const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(r.kind, 'ok');
  assert.equal(r.attempt, 3);
  assert.equal(r.endMs, 1010);
  assert.equal(transport.sent.length, 3);
});

test('maxAttempts 1 sends once; a 4xx is never retried; a 5xx is', async () => {
  for (const [max, kind, expected] of [
    [1, 'http-5xx', 1],
    [3, 'http-4xx', 1],
    [3, 'http-5xx', 3],
    [3, 'conn-refused', 3],
  ] as const) {
    const { clock, transport, env } = setup(
      () => 5,
      () => kind,
    );
    const send = sendOf(
      stack([retry({ maxAttempts: max }), attemptTimeout(500)], viaTransport(transport, clock), env),
    );
    const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
    await clock.runUntilIdle();
    await p;
    assert.equal(transport.sent.length, expected, `${max} attempts on ${kind}`);
  }
});

test("the origin's deadline cuts both the attempt and the retries", async () => {
  const { clock, transport, env } = setup(() => 800);
  const send = sendOf(
    stack([retry({ maxAttempts: 10 }), attemptTimeout(500)], viaTransport(transport, clock), env),
  );
  const p = send({ origin: origin(1200), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(transport.sent.length, 3); // at 0, 500, 1000; the third is cut at 1200
  assert.equal(r.kind, 'deadline-exceeded');
  assert.equal(r.endMs, 1200);
});

test('maxAttempts below 1 is refused', () => {
  assert.throws(() => retry({ maxAttempts: 0 }), RangeError);
});

// ---- retry: backoff, Retry-After, what is retried, the budget, the deadline ----

function retrySetup(
  latency: (a: Attempt) => number,
  kind: (a: Attempt) => AttemptResult['kind'],
  opts: RetryOptions,
  extras: ScriptExtras = {},
) {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, latency, kind, extras);
  const events: PolicyEvent[] = [];
  const env = policyEnv(clock, seededRng(1), { emit: (e) => events.push(e) });
  const send = sendOf(stack([retry(opts), attemptTimeout(500)], viaTransport(transport, clock), env));
  const go = async (o: Origin = origin()): Promise<AttemptResult> => {
    const p = send({ origin: o, number: 1 }, new AbortController().signal);
    await clock.runUntilIdle();
    return p;
  };
  return { clock, transport, events, go };
}

test('fixed and exponential backoff wait before each retry, from the failure', async () => {
  const fixedRun = retrySetup(
    () => 10,
    () => 'http-5xx',
    { maxAttempts: 4, backoff: fixed(200) },
  );
  await fixedRun.go();
  assert.deepEqual(fixedRun.transport.sentAtMs, [0, 210, 420, 630]);
  const expRun = retrySetup(
    () => 10,
    () => 'conn-reset',
    { maxAttempts: 5, backoff: exponential({ baseMs: 100, capMs: 300, jitter: 'none' }) },
  );
  await expRun.go();
  // failures at 10, 120, 330, 640: waits 100, 200, 300 (capped), 300
  assert.deepEqual(expRun.transport.sentAtMs, [0, 110, 320, 630, 940]);
  assert.deepEqual(
    expRun.events.filter((e) => e.type === 'retry').map((e) => (e.type === 'retry' ? e.delayMs : -1)),
    [100, 200, 300, 300],
  );
});

test('a 429 is retried after its Retry-After (when longer than the backoff); a 400 never is', async () => {
  const r429 = retrySetup(
    () => 10,
    (a) => (a.number < 3 ? 'http-4xx' : 'ok'),
    { maxAttempts: 4, backoff: fixed(100) },
    { status: (a) => (a.number < 3 ? 429 : 200), retryAfterMs: (a) => (a.number === 1 ? 2000 : undefined) },
  );
  const r = await r429.go();
  assert.equal(r.kind, 'ok');
  // Retry-After 2 s after the first, the backoff's 100 ms after the second.
  assert.deepEqual(r429.transport.sentAtMs, [0, 2010, 2120]);
  const r400 = retrySetup(
    () => 10,
    () => 'http-4xx',
    { maxAttempts: 4 },
    { status: () => 400 },
  );
  await r400.go();
  assert.equal(r400.transport.sent.length, 1);
});

test('retryOn restricts what is retried', async () => {
  const onlyTimeouts = retrySetup(
    () => 10,
    () => 'http-5xx',
    { maxAttempts: 4, retryOn: ['timeout'] },
  );
  await onlyTimeouts.go();
  assert.equal(onlyTimeouts.transport.sent.length, 1);
  const no429 = retrySetup(
    () => 10,
    () => 'http-4xx',
    { maxAttempts: 4, retryOn: ['timeout', '5xx'] },
    { status: () => 429 },
  );
  await no429.go();
  assert.equal(no429.transport.sent.length, 1);
  assert.equal(isRetryable({ kind: 'shed', status: 503 }), true);
  assert.equal(isRetryable({ kind: 'breaker-open', status: 0 }), false);
  assert.equal(isRetryable({ kind: 'throttled', status: 0 }), false);
  assert.equal(isRetryable({ kind: 'cancelled', status: 0 }), false);
});

test('a retry that would start at or after the deadline is not sent', async () => {
  const s = retrySetup(
    () => 10,
    () => 'http-5xx',
    { maxAttempts: 10, backoff: fixed(400) },
  );
  const r = await s.go(origin(1000));
  // 0 → fails at 10, retry at 410 → fails at 420; the next would start at 820 (< 1000): sent; then 1230: cut.
  assert.deepEqual(s.transport.sentAtMs, [0, 410, 820]);
  assert.equal(r.kind, 'http-5xx');
  assert.deepEqual(
    s.events.filter((e) => e.type === 'retry-denied').map((e) => (e.type === 'retry-denied' ? e.reason : '')),
    ['deadline'],
  );
});

test('the budget is asked before each retry: no token, no retry; the origins share it', async () => {
  const budget = ratioBudget(0.5, 1);
  const s = retrySetup(
    () => 10,
    () => 'http-5xx',
    { maxAttempts: 4, budget },
  );
  await s.go(); // deposits 0.5 (full at 1), one retry (1 token), then denied
  assert.equal(s.transport.sent.length, 2);
  await s.go({ id: 2, intendedMs: 0, deadlineMs: Infinity }); // deposits 0.5: not enough for a retry
  assert.equal(s.transport.sent.length, 3);
  await s.go({ id: 3, intendedMs: 0, deadlineMs: Infinity }); // 0.5 + 0.5 = 1: one retry
  assert.equal(s.transport.sent.length, 5);
  const denied = s.events.filter((e) => e.type === 'retry-denied');
  assert.deepEqual(
    denied.map((e) => (e.type === 'retry-denied' ? [e.origin, e.reason] : [])),
    [
      [1, 'budget'],
      [2, 'budget'],
      [3, 'budget'],
    ],
  );
});

test('maxAttempts reached is reported as exhausted', async () => {
  const s = retrySetup(
    () => 10,
    () => 'timeout',
    { maxAttempts: 2 },
  );
  await s.go();
  assert.equal(s.transport.sent.length, 2);
  assert.deepEqual(
    s.events.map((e) => e.type + (e.type === 'retry-denied' ? `:${e.reason}` : '')),
    ['retry', 'retry-denied:max-attempts'],
  );
});

// ---- deadline propagation ----

test('each attempt carries the remaining deadline in x-deadline-ms, in whole ms at the moment it is sent', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, (a) => (a.number < 3 ? 300.7 : 5));
  const env = policyEnv(clock, seededRng(1));
  const send = sendOf(
    stack(
      [retry({ maxAttempts: 4, backoff: fixed(50) }), attemptTimeout(200), propagateDeadline()],
      viaTransport(transport, clock),
      env,
    ),
  );
  const o: Origin = { id: 1, intendedMs: 10, deadlineMs: 10 + 1000 };
  await clock.advanceTo(10.4);
  const p = send({ origin: o, number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  await p;
  // Sent at 10.4, 260.4, 510.4: 999.6 → 999, 749.6 → 749, 499.6 → 499.
  assert.deepEqual(
    transport.headers.map((h) => h?.[DEADLINE_HEADER]),
    ['999', '749', '499'],
  );
  // No deadline: no header.
  const p2 = send({ origin: origin(), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  await p2;
  assert.equal(transport.headers.at(-1)?.[DEADLINE_HEADER], undefined);
  assert.equal(DEADLINE_HEADER, 'x-deadline-ms');
});

// ---- abandonment ----

test('a user whose patience runs out abandons: attempts in flight are cancelled, no more retries, outcome abandoned', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, () => 800);
  const recorder = new Recorder({});
  const env = policyEnv(clock, seededRng(1));
  const send = sendOf(
    stack(
      [
        abandon({ fraction: 1, patience: { dist: 'constant', meanMs: 1200 } }),
        retry({ maxAttempts: 10 }),
        observe(recorder),
        attemptTimeout(500),
      ],
      viaTransport(transport, clock),
      env,
    ),
  );
  const o: Origin = { id: 1, intendedMs: 100, deadlineMs: Infinity };
  await clock.advanceTo(100);
  const p = send({ origin: o, number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(r.kind, 'abandoned');
  assert.equal(r.endMs, 1300); // intended + patience
  // Attempts at 100, 600, 1100; the third is cancelled at 1300; no fourth.
  assert.deepEqual(transport.sentAtMs, [100, 600, 1100]);
  const rec = recorder.close();
  assert.equal(rec.totals.attemptOutcomes.timeout, 2);
  assert.equal(rec.totals.attemptOutcomes.cancelled, 1);
  assert.equal(clock.pendingTimers, 0);
});

test('abandonment: only the declared fraction of users may give up, and only when slower than their patience', async () => {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(clock, (a) => (a.origin.id % 2 === 0 ? 100 : 5000));
  const env = policyEnv(clock, seededRng(9));
  const send = sendOf(
    stack(
      [abandon({ fraction: 0.3, patience: { dist: 'exponential', meanMs: 1000 } })],
      viaTransport(transport, clock),
      env,
    ),
  );
  const n = 4000;
  const ps: Promise<AttemptResult>[] = [];
  for (let id = 0; id < n; id++)
    ps.push(
      send({ origin: { id, intendedMs: 0, deadlineMs: Infinity }, number: 1 }, new AbortController().signal),
    );
  await clock.runUntilIdle();
  const rs = await Promise.all(ps);
  const abandonedSlow = rs.filter((r, id) => id % 2 === 1 && r.kind === 'abandoned').length;
  const abandonedFast = rs.filter((r, id) => id % 2 === 0 && r.kind === 'abandoned').length;
  // Slow (5 s) origins: 30% of users, and of those all whose patience (exp, mean 1 s) is
  // under 5 s: 0.3 x (1 - e^-5) = 0.298. Fast (100 ms) ones: 0.3 x (1 - e^-0.1) = 0.0285.
  const slowRate = abandonedSlow / (n / 2);
  const fastRate = abandonedFast / (n / 2);
  assert.ok(Math.abs(slowRate - 0.298) < 0.035, `slow ${slowRate}`);
  assert.ok(Math.abs(fastRate - 0.0285) < 0.015, `fast ${fastRate}`);
  assert.throws(() => abandon({ fraction: 1.5, patience: { dist: 'constant', meanMs: 1 } }), RangeError);
});
