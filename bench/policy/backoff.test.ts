import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { exponential, fixed, immediate, type Backoff, type Jitter } from './backoff.js';

/** The delays of the first `n` retries of one origin. */
function delays(b: Backoff, n: number, seed = 1): number[] {
  const rng = seededRng(seed);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    b = b.next(rng);
    out.push(b.delayMs);
  }
  return out;
}

/** The i-th retry's delay over many origins (one backoff each): min, max, mean. */
function stats(make: () => Backoff, i: number, origins = 20_000) {
  const rng = seededRng(7);
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  for (let o = 0; o < origins; o++) {
    let b = make();
    for (let k = 0; k <= i; k++) b = b.next(rng);
    min = Math.min(min, b.delayMs);
    max = Math.max(max, b.delayMs);
    sum += b.delayMs;
  }
  return { min, max, mean: sum / origins };
}

const exp = (jitter: Jitter) => () => exponential({ baseMs: 100, capMs: 1000, jitter });

test('immediate waits 0 and fixed waits its delay before every retry', () => {
  assert.deepEqual(delays(immediate(), 4), [0, 0, 0, 0]);
  assert.deepEqual(delays(fixed(250), 4), [250, 250, 250, 250]);
});

test('exponential without jitter doubles from base and stops at the cap', () => {
  assert.deepEqual(delays(exp('none')(), 6), [100, 200, 400, 800, 1000, 1000]);
});

test('backoff is immutable: next() returns a new value and leaves the old one alone', () => {
  const rng = seededRng(3);
  const b0 = exponential({ baseMs: 100, capMs: 1000, jitter: 'none' });
  const b1 = b0.next(rng);
  const b2 = b1.next(rng);
  assert.equal(b1.delayMs, 100);
  assert.equal(b2.delayMs, 200);
  // Walking from b1 again gives the same next step: no shared state.
  assert.equal(b1.next(rng).delayMs, 200);
  assert.equal(b0.next(rng).delayMs, 100);
});

test('full jitter: U(0, t), range [0, t) and mean t/2', () => {
  for (const [i, t] of [
    [0, 100],
    [2, 400],
    [5, 1000], // capped
  ] as const) {
    const s = stats(exp('full'), i);
    assert.ok(s.min >= 0 && s.min < 0.01 * t, `retry ${i}: min ${s.min}`);
    assert.ok(s.max < t && s.max > 0.99 * t, `retry ${i}: max ${s.max}`);
    assert.ok(Math.abs(s.mean - t / 2) < 0.02 * t, `retry ${i}: mean ${s.mean} vs ${t / 2}`);
  }
});

test('equal jitter: t/2 + U(0, t/2), range [t/2, t) and mean 3t/4', () => {
  for (const [i, t] of [
    [0, 100],
    [3, 800],
    [6, 1000],
  ] as const) {
    const s = stats(exp('equal'), i);
    assert.ok(s.min >= t / 2 && s.min < 0.51 * t, `retry ${i}: min ${s.min}`);
    assert.ok(s.max < t && s.max > 0.99 * t, `retry ${i}: max ${s.max}`);
    assert.ok(Math.abs(s.mean - 0.75 * t) < 0.02 * t, `retry ${i}: mean ${s.mean} vs ${0.75 * t}`);
  }
});

test('decorrelated jitter: min(cap, U(base, 3 x previous)), previous starting at base', () => {
  // First retry: U(100, 300), mean 200.
  const s0 = stats(exp('decorrelated'), 0);
  assert.ok(s0.min >= 100 && s0.min < 102, `min ${s0.min}`);
  assert.ok(s0.max < 300 && s0.max > 298, `max ${s0.max}`);
  assert.ok(Math.abs(s0.mean - 200) < 3, `mean ${s0.mean}`);
  // Second retry: E[U(100, 3 x U(100, 300))] = (100 + 3 x 200) / 2 = 350, below the cap of 1000 at most 900.
  const s1 = stats(exp('decorrelated'), 1);
  assert.ok(s1.min >= 100 && s1.max <= 900, `range ${s1.min}..${s1.max}`);
  assert.ok(Math.abs(s1.mean - 350) < 6, `mean ${s1.mean}`);
  // Each delay stays within [base, min(cap, 3 x previous)], step by step.
  const rng = seededRng(11);
  let b = exponential({ baseMs: 100, capMs: 1000, jitter: 'decorrelated' });
  let prev = 100;
  for (let i = 0; i < 50; i++) {
    b = b.next(rng);
    assert.ok(
      b.delayMs >= 100 && b.delayMs <= Math.min(1000, 3 * prev),
      `step ${i}: ${b.delayMs} after ${prev}`,
    );
    prev = b.delayMs;
  }
  // Many steps reach the cap and stay at or below it.
  const late = stats(exp('decorrelated'), 20);
  assert.ok(late.max <= 1000 && late.mean > 500, `late ${late.mean}`);
});

test('the same seed gives the same jitter; another seed does not', () => {
  assert.deepEqual(delays(exp('full')(), 5, 42), delays(exp('full')(), 5, 42));
  assert.notDeepEqual(delays(exp('full')(), 5, 42), delays(exp('full')(), 5, 43));
});

test('absurd parameters are refused', () => {
  assert.throws(() => exponential({ baseMs: 100, capMs: 50, jitter: 'full' }), RangeError);
  assert.throws(() => exponential({ baseMs: -1, capMs: 50, jitter: 'full' }), RangeError);
  assert.throws(() => fixed(Number.NaN), RangeError);
});
