import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../clock.js';
import { seededRng } from '../rng.js';
import type { AttemptResult, Origin } from '../outcome.js';
import { ScriptedTransport } from '../../test/helpers/fakeTransport.js';
import { policyEnv, stack, viaTransport, type ClientPolicy } from './ClientPolicy.js';
import { retry } from './retry.js';
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
  const record: ClientPolicy = (next) => async (a, s) => {
    const r = await next(a, s);
    seen.push(r);
    return r;
  };
  return { clock, transport, env, seen, record };
}

const origin = (deadlineMs = Number.POSITIVE_INFINITY): Origin => ({ id: 1, intendedMs: 0, deadlineMs });

test('the attempt timeout aborts a slow attempt at exactly its limit', async () => {
  const { clock, transport, env } = setup(() => 800);
  const send = stack([attemptTimeout(500)], viaTransport(transport, clock), env);
  const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
  await clock.runUntilIdle();
  const r = await p;
  assert.equal(r.kind, 'timeout');
  assert.equal(r.endMs, 500);
  assert.equal(transport.aborted, 1);
});

test('immediate retry re-sends at once after each timeout, up to maxAttempts in all', async () => {
  const { clock, transport, env, seen, record } = setup(() => 800);
  const send = stack(
    [retry({ maxAttempts: 4 }), record, attemptTimeout(500)],
    viaTransport(transport, clock),
    env,
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
  const send = stack(
    [retry({ maxAttempts: 4 }), attemptTimeout(500)],
    viaTransport(transport, clock),
    env,
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
    const send = stack(
      [retry({ maxAttempts: max }), attemptTimeout(500)],
      viaTransport(transport, clock),
      env,
    );
    const p = send({ origin: origin(), number: 1 }, new AbortController().signal);
    await clock.runUntilIdle();
    await p;
    assert.equal(transport.sent.length, expected, `${max} attempts on ${kind}`);
  }
});

test("the origin's deadline cuts both the attempt and the retries", async () => {
  const { clock, transport, env } = setup(() => 800);
  const send = stack(
    [retry({ maxAttempts: 10 }), attemptTimeout(500)],
    viaTransport(transport, clock),
    env,
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
