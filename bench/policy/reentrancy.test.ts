import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import type { Attempt, AttemptResult, OutcomeKind, Origin } from '../outcome.js';
import { fixed } from './backoff.js';
import { policyEnv, stack, type ClientPolicy } from './ClientPolicy.js';
import { SETTLED, type Dispatch, type InFlight } from './dispatch.js';
import { retry } from './retry.js';
import { attemptTimeout } from './timeout.js';

/**
 * The layer below may answer inside `dispatch` or inside `abort` (the simulator's
 * transport and a refusing breaker do): each layer must still answer exactly once, keep
 * aborting what is really in flight, and leave no timer behind.
 */

/** A layer below that answers attempt n at once with `now(n)`, or holds it and answers `onAbort` inside abort. */
class SyncBelow {
  readonly sent: Attempt[] = [];
  aborts = 0;
  constructor(
    private readonly clock: VirtualClock,
    private readonly now: (n: number) => OutcomeKind | undefined,
    private readonly onAbort: OutcomeKind = 'conn-error',
  ) {}

  readonly dispatch: Dispatch = (a, h) => {
    this.sent.push(a);
    const at = this.clock.now();
    const result = (kind: OutcomeKind): AttemptResult => ({
      kind,
      status: kind === 'ok' ? 200 : 0,
      sentMs: at,
      endMs: this.clock.now(),
      attempt: a.number,
    });
    const kind = this.now(a.number);
    if (kind !== undefined) {
      h.onResponse(result(kind));
      return SETTLED;
    }
    let done = false;
    return {
      abort: () => {
        this.aborts++;
        if (done) return;
        done = true;
        h.onResponse(result(this.onAbort));
      },
    };
  };
}

function run(clock: VirtualClock, policies: ClientPolicy[], below: SyncBelow, origin: Origin) {
  const dispatch = stack(policies, below.dispatch, policyEnv(clock, seededRng(1)));
  const answers: AttemptResult[] = [];
  const inFlight: InFlight = dispatch({ origin, number: 1 }, { onResponse: (r) => answers.push(r) });
  return { answers, inFlight };
}

const origin = (deadlineMs = Number.POSITIVE_INFINITY): Origin => ({ id: 1, intendedMs: 0, deadlineMs });

test('timeout: an answer inside dispatch passes up at once, exactly once, and cancels the timer', async () => {
  const clock = new VirtualClock();
  const below = new SyncBelow(clock, () => 'ok');
  const { answers, inFlight } = run(clock, [attemptTimeout(500)], below, origin());
  assert.equal(answers.length, 1);
  assert.equal(answers[0]!.kind, 'ok');
  assert.equal(clock.pendingTimers, 0);
  inFlight.abort(); // settled: nothing to abort
  await clock.runUntilIdle();
  assert.equal(answers.length, 1);
  assert.equal(below.aborts, 0);
});

test('timeout: an answer inside abort, when the timer fires, is the timeout at the limit', async () => {
  const clock = new VirtualClock();
  const below = new SyncBelow(clock, () => undefined);
  const { answers, inFlight } = run(clock, [attemptTimeout(500)], below, origin(300));
  assert.equal(answers.length, 0);
  await clock.runUntilIdle();
  assert.deepEqual(
    answers.map((r) => [r.kind, r.endMs]),
    [['deadline-exceeded', 300]],
  );
  assert.equal(below.aborts, 1);
  inFlight.abort();
  assert.equal(answers.length, 1);
});

test('timeout: the caller aborting gets the answer given inside abort, once, and not as a timeout', async () => {
  const clock = new VirtualClock();
  const below = new SyncBelow(clock, () => undefined, 'conn-reset');
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
  const below = new SyncBelow(clock, (n) => (n < 3 ? 'http-5xx' : 'ok'));
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
  assert.equal(below.aborts, 0);
  assert.equal(clock.pendingTimers, 0);
});

test('retry: after a synchronous failure the backoff wait is a timer, and aborting it answers the failure inside abort', async () => {
  const clock = new VirtualClock();
  const below = new SyncBelow(clock, () => 'http-5xx');
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
  const below = new SyncBelow(clock, () => undefined);
  const { answers, inFlight } = run(clock, [retry({ maxAttempts: 3 }), attemptTimeout(500)], below, origin());
  await clock.advanceTo(500); // try 1 times out; try 2 goes at once, from inside the abort
  assert.deepEqual(
    below.sent.map((a) => a.number),
    [1, 2],
  );
  assert.equal(below.aborts, 1);
  inFlight.abort(); // reaches try 2, which answers inside abort: no try 3
  assert.equal(below.aborts, 2);
  assert.deepEqual(
    answers.map((r) => [r.kind, r.attempt]),
    [['conn-error', 2]],
  );
  await clock.runUntilIdle();
  assert.equal(below.sent.length, 2);
  assert.equal(clock.pendingTimers, 0);
});
