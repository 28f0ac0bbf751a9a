import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { flatArrivals } from '../../test/helpers/arrivals.js';
import type { ArrivalProcess } from './ArrivalProcess.js';

function drain(a: ArrivalProcess): number[] {
  const out: number[] = [];
  for (let t = a.next(); t !== undefined; t = a.next()) out.push(t);
  return out;
}

function gapStats(ts: readonly number[]): { mean: number; cv: number } {
  const gaps = ts.slice(1).map((t, i) => t - ts[i]!);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const sd = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / (gaps.length - 1));
  return { mean, cv: sd / mean };
}

test('poisson at a flat rate: gaps have mean 1/λ and a coefficient of variation near 1', () => {
  for (const [rate, seed] of [
    [100, 42],
    [280, 7],
    [2000, 1],
  ] as const) {
    const ts = drain(flatArrivals('poisson', rate, 0, 200_000, seededRng(seed, 'arrivals')));
    const { mean, cv } = gapStats(ts);
    assert.ok(Math.abs(mean - 1000 / rate) / (1000 / rate) < 0.02, `rate ${rate}: mean gap ${mean} ms`);
    assert.ok(Math.abs(cv - 1) < 0.03, `rate ${rate}: CV ${cv}`);
    assert.ok(Math.abs(ts.length - rate * 200) / (rate * 200) < 0.02, `rate ${rate}: ${ts.length} arrivals`);
  }
});

test('poisson arrivals are non-decreasing, inside the span, and the same for the same seed', () => {
  const a = drain(flatArrivals('poisson', 500, 1000, 3000, seededRng(9, 'arrivals')));
  const b = drain(flatArrivals('poisson', 500, 1000, 3000, seededRng(9, 'arrivals')));
  const c = drain(flatArrivals('poisson', 500, 1000, 3000, seededRng(10, 'arrivals')));
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
  for (let i = 1; i < a.length; i++) assert.ok(a[i]! >= a[i - 1]!);
  assert.ok(a[0]! >= 1000 && a[a.length - 1]! < 3000);
});

test('constant at a flat rate: gaps are 1/λ with no dispersion, and never drift', () => {
  const ts = drain(flatArrivals('constant', 300, 0, 60_000));
  assert.equal(ts.length, 18_000);
  const { mean, cv } = gapStats(ts);
  assert.ok(Math.abs(mean - 1000 / 300) < 1e-9);
  assert.ok(cv < 1e-9, `CV ${cv}`);
  // Computed as start + i/rate, not accumulated: the last one is on schedule.
  assert.ok(Math.abs(ts[17_999]! - (17_999 * 1000) / 300) < 1e-9, `last ${ts[17_999]}`);
});

test('a zero rate offers nothing', () => {
  assert.deepEqual(drain(flatArrivals('constant', 0, 0, 1000)), []);
  assert.deepEqual(drain(flatArrivals('poisson', 0, 0, 1000, seededRng(1))), []);
});
