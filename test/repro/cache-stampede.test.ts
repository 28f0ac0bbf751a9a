import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import { assertTwinAgrees } from '../helpers/twin.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import type { LabTopology } from '../../orchestrator/lab/Lab.js';
import { assertClaimed, suiteScale } from '../helpers/catalogue.js';
import { reproRuntimeArgs } from '../helpers/experiment.js';

// Issue 6's acceptance: the cache experiments at the suite's scale on the local lab with
// real redis-server and postgres processes.

async function run(file: string, tag: string) {
  const tmp = tempDir(tag);
  const out = join(tmp, 'out');
  const scale = suiteScale(file.replace(/^.*\//, '').replace(/\.yaml$/, ''));
  const r = await runCli(
    ['run', file, '--scale', String(scale), '--repeat', '1', '--out', out, '--quiet', ...reproRuntimeArgs()],
    { METABENCH_STATE_DIR: join(tmp, 'state') },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  await assertTwinAgrees(file, s);
  const manifest = JSON.parse(readFileSync(join(out, 'run-1/manifest.json'), 'utf8')) as {
    topology: LabTopology;
  };
  const [header, ...rows] = readFileSync(join(out, 'run-1/timeseries.csv'), 'utf8').trim().split('\n');
  const cols = header!.split(',');
  const column = (name: string): number[] => {
    const i = cols.indexOf(name);
    assert.ok(i >= 0, `timeseries.csv has ${name}`);
    return rows.map((r) => Number(r.split(',')[i]));
  };
  return { out, s, manifest, cols, column };
}

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

function sumOf(a: number[]): number {
  return a.reduce((x, y) => x + (Number.isFinite(y) ? y : 0), 0);
}

function rows(a: number[]): number {
  return a.length;
}
