import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerSource } from '../lab/RuntimePlugin.js';
import { replicaServerSource, sumReplicaSeries } from './replicaSeries.js';
import type { ServerSeries } from './scraper.js';

/** A replica's series: received/completed per bucket (null: no answer), the span the scraper sets. */
function series(received: (number | null)[], extra?: Record<string, (number | null)[]>): ServerSeries {
  const span: (number | null)[] = [];
  let missed = 0;
  for (const r of received) {
    span.push(r === null ? null : missed + 1);
    missed = r === null ? missed + 1 : 0;
  }
  return {
    received,
    completed: received.map((r) => (r === null ? null : r - 1)),
    wasted: received.map((r) => (r === null ? null : 0)),
    cpuSeconds: received.map((r) => (r === null ? null : 0.5)),
    queueDepth: received.map((r) => (r === null ? null : 2)),
    busyWorkers: received.map((r) => (r === null ? null : 1)),
    rssBytes: received.map((r) => (r === null ? null : 100)),
    span,
    ...(extra ? { extra } : {}),
  };
}

test('replica series sum over the replicas that answered each bucket; a silent replica’s next answer carries its increase', () => {
  // Replica 1 did not answer buckets 1 and 2 (paused); its answer in bucket 3 carries 3 buckets.
  const a = series([10, 10, 10, 10], { cache_hits: [1, 1, 1, 1] });
  const b = series([10, null, null, 30], {
    cache_hits: [2, null, null, 6],
    rejected_queue_full: [0, null, null, 4],
  });
  const s = sumReplicaSeries([a, b]);
  assert.deepEqual(s.received, [20, 10, 10, 40]);
  assert.deepEqual(s.completed, [18, 9, 9, 38]);
  // Gauges too: a paused replica's queue is not in the sum.
  assert.deepEqual(s.queueDepth, [4, 2, 2, 4]);
  assert.deepEqual(s.busyWorkers, [2, 1, 1, 2]);
  assert.deepEqual(s.cpuSeconds, [1, 0.5, 0.5, 1]);
  // The smallest span among those that answered: a window over the outage divides by its buckets.
  assert.deepEqual(s.span, [1, 1, 1, 1]);
  assert.deepEqual(s.extra!['cache_hits'], [3, 1, 1, 7]);
  assert.deepEqual(s.extra!['rejected_queue_full'], [0, null, null, 4]);
  // Each replica's own series, as scraped.
  assert.deepEqual(s.extra!['api0_received'], [10, 10, 10, 10]);
  assert.deepEqual(s.extra!['api1_received'], [10, null, null, 30]);
  assert.deepEqual(s.extra!['api1_completed'], [9, null, null, 29]);
  assert.deepEqual(s.extra!['api1_queue_depth'], [2, null, null, 2]);
  assert.deepEqual(s.extra!['api0_busy_workers'], [1, 1, 1, 1]);
  assert.equal(
    s.extra!['api0_wasted'],
    undefined,
    'per replica: received, completed, queue depth, busy workers',
  );
});

test('when no replica answers a bucket it is empty, and the span covers the buckets the next answers carry', () => {
  const s = sumReplicaSeries([series([5, null, 15]), series([5, null, 15, 5])]);
  assert.deepEqual(s.received, [10, null, 30, 5]);
  assert.deepEqual(s.span, [1, null, 2, 1]);
  assert.deepEqual(s.queueDepth, [4, null, 4, 2]);
});

test('a source over replicas starts and stops each, and sums their series; one replica is its own source', async () => {
  const started: number[] = [];
  const source = (i: number, s: ServerSeries, scrapes: number): ServerSource => ({
    start: () => started.push(i),
    stop: async () => s,
    scrapes,
  });
  const one = source(0, series([1]), 2);
  assert.equal(replicaServerSource([one]), one);
  const both = replicaServerSource([source(0, series([1, 2]), 3), source(1, series([3, null]), 1)]);
  both.start();
  assert.deepEqual(started, [0, 1]);
  assert.equal(both.scrapes, 3);
  assert.deepEqual((await both.stop()).received, [4, 2]);
});
