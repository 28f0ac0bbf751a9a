import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import * as hdr from 'hdr-histogram-js';
import {
  bucketMedianUs,
  createLatencyHistogram,
  meanUs,
  percentilesUs,
  recordUs,
  type LatencyHistogram,
} from './histogram.js';

/** Everything a summary or a series reads from a histogram, and its counts bucket by bucket. */
const figures = (h: LatencyHistogram): unknown => {
  // The library's counts array (not public API): the two must agree bucket by bucket.
  const counts = Array.from((h as unknown as { _counts: Uint32Array })._counts);
  return {
    total: h.totalCount,
    min: h.minNonZeroValue,
    max: h.maxValue,
    mean: h.mean,
    p: [0, 50, 90, 99, 99.9, 100].map((p) => h.getValueAtPercentile(p)),
    counts,
    table: h.outputPercentileDistribution(),
  };
};

test('recordUs records what recordValue records, across every bucket of the range', () => {
  const rng = seededRng(11, 'histogram');
  const fast = createLatencyHistogram();
  const slow = createLatencyHistogram();
  // Edges of buckets and of the range, then log-uniform values from 1 µs to an hour.
  const values = [1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 2 ** 31 - 1, 2 ** 31, 3_600_000_000];
  for (let i = 0; i < 20_000; i++)
    values.push(Math.max(1, Math.round(Math.exp(rng.next() * Math.log(3.6e9)))));
  for (const v of values) {
    recordUs(fast, v);
    slow.recordValue(v);
  }
  assert.deepEqual(figures(fast), figures(slow));
  assert.equal(fast.totalCount, values.length);
});

test('recordUs hands what it cannot index to recordValue (fractional, zero)', () => {
  const fast = createLatencyHistogram();
  const slow = createLatencyHistogram();
  for (const v of [2.5, 0, 1500.25]) {
    recordUs(fast, v);
    slow.recordValue(v);
  }
  assert.deepEqual(figures(fast), figures(slow));
});

test("createLatencyHistogram makes what the package's builder made: the same class, range and resizing", () => {
  const built = hdr.build({
    bitBucketSize: 32,
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000_000,
    numberOfSignificantValueDigits: 3,
    useWebAssembly: false,
  });
  const ours = createLatencyHistogram();
  assert.equal(ours.constructor.name, built.constructor.name);
  for (const k of [
    'autoResize',
    'highestTrackableValue',
    'lowestDiscernibleValue',
    'numberOfSignificantValueDigits',
  ])
    assert.equal((ours as never)[k], (built as never)[k], k);
  for (const us of [1, 999, 20_000, 3_600_000_000, 5e9]) {
    ours.recordValue(us);
    built.recordValue(us);
  }
  assert.equal(ours.totalCount, built.totalCount);
  assert.equal(ours.maxValue, built.maxValue);
});

test("meanUs is the library's mean to the bit, on wide and narrow distributions", () => {
  const rng = seededRng(7);
  for (const spread of [1, 50, 20_000, 2_000_000, 3_000_000_000]) {
    const h = createLatencyHistogram();
    assert.equal(meanUs(h), h.mean);
    for (let i = 0; i < 20_000; i++) recordUs(h, 1 + Math.floor(rng.next() * rng.next() * spread));
    assert.ok(Object.is(meanUs(h), h.mean), `spread ${spread}: ${meanUs(h)} vs ${h.mean}`);
  }
});

test("bucketMedianUs is the library's median equivalent value of every bucket of the range", () => {
  const h = createLatencyHistogram() as unknown as {
    countsArrayLength: number;
    subBucketHalfCountMagnitude: number;
    valueFromIndex(i: number): number;
    highestEquivalentValue(v: number): number;
    medianEquivalentValue(v: number): number;
  };
  for (let i = 0; i < h.countsArrayLength; i++) {
    const library = h.medianEquivalentValue(h.highestEquivalentValue(h.valueFromIndex(i)));
    assert.equal(bucketMedianUs(i, h.subBucketHalfCountMagnitude), library, `index ${i}`);
  }
});

test('percentilesUs gives what getValueAtPercentile gives, percentile by percentile', () => {
  const rng = seededRng(5);
  const ps = [0, 0.1, 1, 25, 50, 90, 99, 99.9, 99.99, 100, 120];
  for (const [spread, n] of [
    [1, 1],
    [50, 7],
    [20_000, 1000],
    [2_000_000, 20_000],
    [3_000_000_000, 20_000],
  ] as const) {
    const h = createLatencyHistogram();
    assert.deepEqual(
      percentilesUs(h, ps),
      ps.map((p) => h.getValueAtPercentile(p)),
    );
    for (let i = 0; i < n; i++) recordUs(h, 1 + Math.floor(rng.next() * rng.next() * spread));
    assert.deepEqual(
      percentilesUs(h, ps),
      ps.map((p) => h.getValueAtPercentile(p)),
      `spread ${spread}`,
    );
  }
});
