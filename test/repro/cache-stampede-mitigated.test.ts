import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClaimed } from '../helpers/catalogue.js';
import { run, sumOf } from '../helpers/cacheRun.js';

// cache-stampede's mitigated twin (issue 6) at the suite's scale on the local lab: in the
// whole suite, not CI's share (test/run.js), which keeps the metastable row.

test('cache-stampede-mitigated recovers: queue-time shedding lets the cache refill', async () => {
  const { s, column } = await run('experiments/cache-stampede-mitigated.yaml', 'csm');
  assert.equal(s.usable, true);
  assertClaimed('cache-stampede-mitigated', s);
  assert.ok(sumOf(column('rejected_queue_time')) > 0, 'the shedding did shed');
  const hits = column('cache_hits');
  const misses = column('cache_misses');
  const last = hits.length;
  const h =
    sumOf(hits.slice(last - 5)) / Math.max(1, sumOf(hits.slice(last - 5)) + sumOf(misses.slice(last - 5)));
  assert.ok(h > 0.9, `final hit ratio ${h}`);
});
