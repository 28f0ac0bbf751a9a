import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { trendOf } from './trend.js';

test('a clean rising line is rising, a falling one falling, a flat one neither', () => {
  const up = trendOf(Array.from({ length: 20 }, (_, i) => 3 + 2 * i))!;
  assert.equal(up.slope, 2);
  assert.equal(up.rising, true);
  assert.equal(up.falling, false);
  assert.equal(up.last, 41);
  const down = trendOf(Array.from({ length: 20 }, (_, i) => 50 - i))!;
  assert.equal(down.falling, true);
  const flat = trendOf(Array<number>(20).fill(0))!;
  assert.equal(flat.rising, false);
  assert.equal(flat.falling, false);
});

test('noise around a level is not a trend at 95% confidence; a slope of 1/s through the same noise is', () => {
  const rng = seededRng(7, 'trend');
  const noise = Array.from({ length: 30 }, () => (rng.next() - 0.5) * 20);
  const level = trendOf(noise.map((n) => 100 + n))!;
  assert.equal(level.rising, false);
  const rising = trendOf(noise.map((n, i) => 100 + n + 1 * i))!;
  assert.equal(rising.rising, true);
});

test('nulls are skipped; fewer than 3 values give no trend', () => {
  assert.equal(trendOf([1, null, 2]), null);
  const t = trendOf([0, null, 2, null, 4])!;
  assert.equal(t.n, 3);
  assert.equal(t.slope, 1);
});
