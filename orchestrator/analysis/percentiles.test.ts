import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nearestRank } from './percentiles.js';
import { createLatencyHistogram, recordMs, summarize } from '../../bench/record/histogram.js';

test('nearest-rank percentiles pick a sample, never interpolate', () => {
  const xs = [15, 20, 35, 40, 50];
  assert.equal(nearestRank(xs, 5), 15);
  assert.equal(nearestRank(xs, 30), 20);
  assert.equal(nearestRank(xs, 40), 20); // rank ceil(2.0) = 2
  assert.equal(nearestRank(xs, 50), 35);
  assert.equal(nearestRank(xs, 100), 50);
  const hundred = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.equal(nearestRank(hundred, 99), 99);
  assert.equal(nearestRank(hundred, 99.5), 100);
  assert.equal(nearestRank([7], 99), 7);
  // rank ceil(0.9 * 7) = ceil(6.3) = 7: the largest, where rounding would give the 6th.
  assert.equal(nearestRank([1, 2, 3, 4, 5, 6, 7], 90), 7);
});

test('no samples means no percentile', () => {
  assert.equal(nearestRank([], 50), null);
  const s = summarize(createLatencyHistogram());
  assert.equal(s.samples, 0);
  assert.equal(s.p99, null);
});

test('the latency histogram agrees with exact nearest-rank within its resolution', () => {
  const h = createLatencyHistogram();
  const xs: number[] = [];
  let x = 1;
  for (let i = 0; i < 5000; i++) {
    x = (x * 48271) % 2147483647;
    const ms = (x % 100000) / 100; // 0..1000 ms
    xs.push(ms);
    recordMs(h, ms);
  }
  xs.sort((a, b) => a - b);
  const s = summarize(h);
  assert.equal(s.samples, 5000);
  for (const [p, v] of [
    [50, s.p50],
    [90, s.p90],
    [99, s.p99],
  ] as const) {
    const exact = nearestRank(xs, p)!;
    assert.ok(Math.abs(v! - exact) <= exact * 0.001 + 0.002, `p${p}: ${v} vs exact ${exact}`);
  }
  // The 7-sample case: nearest rank, not rounding.
  const h7 = createLatencyHistogram();
  for (const v of [1, 2, 3, 4, 5, 6, 7]) recordMs(h7, v);
  // (HdrHistogram reports the highest value equivalent to the sample, within 0.1%.)
  const p90 = summarize(h7).p90!;
  assert.ok(p90 >= 7 && p90 <= 7.007, `p90 ${p90}`);
});
