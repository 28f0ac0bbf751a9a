import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import type { AttemptResult, Origin } from '../outcome.js';
import { fixed } from './backoff.js';
import { policyEnv, stack, type ClientPolicy } from './ClientPolicy.js';
import type { InFlight } from './dispatch.js';
import { ImmediateDispatch } from '../../test/helpers/dispatchFake.js';
import { retry } from './retry.js';
import { attemptTimeout } from './timeout.js';

/**
 * The layer below may answer inside `dispatch` or inside `abort` (the simulator's
 * transport and a refusing breaker do): each layer must still answer exactly once, keep
 * aborting what is really in flight, and leave no timer behind.
 */

function run(clock: VirtualClock, policies: ClientPolicy[], below: ImmediateDispatch, origin: Origin) {
  const dispatch = stack(policies, below.dispatch, policyEnv(clock, seededRng(1)));
  const answers: AttemptResult[] = [];
  const inFlight: InFlight = dispatch({ origin, number: 1 }, { onResponse: (r) => answers.push(r) });
  return { answers, inFlight };
}

const origin = (deadlineMs = Number.POSITIVE_INFINITY): Origin => ({ id: 1, intendedMs: 0, deadlineMs });

test('timeout: an answer inside dispatch passes up at once, exactly once, and cancels the timer', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => 'ok', 'conn-error');
  const { answers, inFlight } = run(clock, [attemptTimeout(500)], below, origin());
  assert.equal(answers.length, 1);
  assert.equal(answers[0]!.kind, 'ok');
  assert.equal(clock.pendingTimers, 0);
  inFlight.abort(); // settled: nothing to abort
  await clock.runUntilIdle();
  assert.equal(answers.length, 1);
  assert.equal(below.abortCalls, 0);
});

test('timeout: an answer inside abort, when the timer fires, is the timeout at the limit', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => undefined, 'conn-error');
  const { answers, inFlight } = run(clock, [attemptTimeout(500)], below, origin(300));
  assert.equal(answers.length, 0);
  await clock.runUntilIdle();
  assert.deepEqual(
    answers.map((r) => [r.kind, r.endMs]),
    [['deadline-exceeded', 300]],
  );
  assert.equal(below.abortCalls, 1);
  inFlight.abort();
  assert.equal(answers.length, 1);
});

test('timeout: the caller aborting gets the answer given inside abort, once, and not as a timeout', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => undefined, 'conn-reset');
  const { answers, inFlight } = run(clock, [attemptTimeout(500)], below, origin());
  await clock.advanceTo(100);
  inFlight.abort();
  assert.deepEqual(
    answers.map((r) => r.kind),
    ['conn-reset'],
  );
  assert.equal(clock.pendingTimers, 0);
});

test('retry: tries answered inside dispatch are retried from inside the answer, up to the one that succeeds', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, (a) => (a.number < 3 ? 'http-5xx' : 'ok'), 'conn-error');
  const { answers, inFlight } = run(clock, [retry({ maxAttempts: 4 })], below, origin());
  assert.deepEqual(
    below.sent.map((a) => a.number),
    [1, 2, 3],
  );
  assert.deepEqual(
    answers.map((r) => [r.kind, r.attempt]),
    [['ok', 3]],
  );
  inFlight.abort();
  assert.equal(below.abortCalls, 0);
  assert.equal(clock.pendingTimers, 0);
});

test('retry: after a synchronous failure the backoff wait is a timer, and aborting it answers the failure inside abort', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => 'http-5xx', 'conn-error');
  const { answers, inFlight } = run(clock, [retry({ maxAttempts: 4, backoff: fixed(100) })], below, origin());
  assert.equal(below.sent.length, 1);
  await clock.advanceTo(150); // the second try went at 100 and failed at once
  assert.equal(below.sent.length, 2);
  assert.equal(answers.length, 0);
  inFlight.abort();
  assert.deepEqual(
    answers.map((r) => [r.kind, r.attempt]),
    [['http-5xx', 2]],
  );
  assert.equal(clock.pendingTimers, 0);
  await clock.runUntilIdle();
  assert.equal(below.sent.length, 2);
});

test('retry over timeout: a try answered inside the timeout abort is retried from inside it, and the new try is what an abort reaches', async () => {
  const clock = new VirtualClock();
  const below = new ImmediateDispatch(clock, () => undefined, 'conn-error');
  const { answers, inFlight } = run(clock, [retry({ maxAttempts: 3 }), attemptTimeout(500)], below, origin());
  await clock.advanceTo(500); // try 1 times out; try 2 goes at once, from inside the abort
  assert.deepEqual(
    below.sent.map((a) => a.number),
    [1, 2],
  );
  assert.equal(below.abortCalls, 1);
  inFlight.abort(); // reaches try 2, which answers inside abort: no try 3
  assert.equal(below.abortCalls, 2);
  assert.deepEqual(
    answers.map((r) => [r.kind, r.attempt]),
    [['conn-error', 2]],
  );
  await clock.runUntilIdle();
  assert.equal(below.sent.length, 2);
  assert.equal(clock.pendingTimers, 0);
});
