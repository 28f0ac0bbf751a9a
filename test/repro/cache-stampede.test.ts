import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertClaimed } from '../helpers/catalogue.js';
import { run } from '../helpers/cacheRun.js';

// Issue 6's acceptance: cache-stampede at the suite's scale on the local lab with real
// redis-server and postgres processes. Its mitigated twin is cache-stampede-mitigated.test.ts
// (the whole suite; CI's share runs this one).

test('cache-stampede is metastable: the flushed cache stays cold', async () => {
  const { s, manifest, cols, column } = await run('experiments/cache-stampede.yaml', 'cs');
  assert.equal(s.usable, true);
  assert.equal(s.offered, s.recorded);
  assert.equal(s.trigger.kind, 'flush-cache');
  assertClaimed('cache-stampede', s);
  assert.ok(
    s.afterTrigger.goodputPerS! < 0.7 * s.baseline.goodputPerS!,
    `goodput ${s.afterTrigger.goodputPerS} vs baseline ${s.baseline.goodputPerS}`,
  );
  // The mechanism, from the api's own counters: hits before the flush, misses after.
  const hits = column('cache_hits');
  const misses = column('cache_misses');
  const flushS = Math.floor(s.trigger.startS);
  const sum = (a: number[], from: number, to: number) => a.slice(from, to).reduce((x, y) => x + (y || 0), 0);
  const hitRatio = (from: number, to: number) =>
    sum(hits, from, to) / Math.max(1, sum(hits, from, to) + sum(misses, from, to));
  assert.ok(hitRatio(2, flushS) > 0.99, `baseline hit ratio ${hitRatio(2, flushS)}`);
  assert.ok(
    hitRatio(rows(hits) - 5, rows(hits)) < 0.5,
    `final hit ratio ${hitRatio(rows(hits) - 5, rows(hits))}`,
  );
  // The topology and the versions of the real services are in the manifest.
  const byName = new Map(manifest.topology.components.map((c) => [c.name, c]));
  assert.match(byName.get('redis')?.version ?? '', /^\d+\.\d+/);
  assert.match(byName.get('postgres')?.version ?? '', /^\d+/);
  assert.deepEqual(
    manifest.topology.links?.map((l) => `${l.from}->${l.to}`),
    ['api->redis', 'api->postgres'],
  );
  for (const c of [
    'proc_api_cpu',
    'proc_redis_cpu',
    'proc_postgres_cpu',
    'proc_postgres_rss_bytes',
    'db_pool_waiting',
  ])
    assert.ok(cols.includes(c), c);
});

function rows(a: number[]): number {
  return a.length;
}
