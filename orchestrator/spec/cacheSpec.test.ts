import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseExperiment } from './load.js';
import { apiMitigations, labCacheConfig } from '../lab/labConfig.js';
import { specIssues } from '../../test/helpers/specIssues.js';

const read = (name: string): string =>
  readFileSync(new URL(`../../../experiments/${name}`, import.meta.url), 'utf8');

test('cache-stampede declares a cache, a database, a request timeout and a flush-cache trigger', () => {
  const e = parseExperiment(read('cache-stampede.yaml'), 'cache-stampede.yaml');
  assert.deepEqual(e.schedule.triggers, [
    { kind: 'flush-cache', target: 'redis', duration: 10_000, atMs: 0 },
  ]);
  assert.deepEqual(labCacheConfig(e.lab!), {
    requestTimeoutMs: 400,
    cache: { ttlS: 3600, prewarm: true, keys: 300, pool: 8, queryDelay: { dist: 'constant', meanMs: 200 } },
  });
  assert.deepEqual(apiMitigations(e.lab!.api), { queue: 'fifo' });
  const m = parseExperiment(read('cache-stampede-mitigated.yaml'), 'm.yaml');
  assert.deepEqual(apiMitigations(m.lab!.api), { queue: 'fifo', shedQueueTimeMs: 50 });
});

test('every mitigation is off by default and maps to the api when switched on', () => {
  const base = read('retry-storm.yaml');
  assert.deepEqual(apiMitigations(parseExperiment(base, 'x.yaml').lab!.api), { queue: 'fifo' });
  const on = base.replace(
    'queue: fifo }',
    'queue: lifo, queueLimit: 50, concurrencyLimit: 100, deadlineDrop: true, shed: { policy: codel, target: 5ms, interval: 100ms } }',
  );
  assert.deepEqual(apiMitigations(parseExperiment(on, 'x.yaml').lab!.api), {
    queue: 'lifo',
    queueBound: 50,
    concurrencyLimit: 100,
    codel: { targetMs: 5, intervalMs: 100 },
    deadlineDrop: true,
  });
});

test('the schema refuses a cache without a database, a bad CoDel, and cache triggers without a cache', () => {
  const base = read('cache-stampede.yaml');
  const noDb = base.replace(/^ {2}db: .*\n/m, '');
  assert.ok(specIssues(noDb).some((i) => /needs both lab.cache and lab.db/.test(i.message)));
  const codel = read('retry-storm.yaml').replace(
    'queue: fifo }',
    'queue: fifo, shed: { policy: codel, target: 100ms, interval: 50ms } }',
  );
  assert.ok(specIssues(codel).some((i) => /longer than target/.test(i.message)));
  const pauseDb = read('retry-storm.yaml').replace('target: api', 'target: postgres');
  assert.ok(specIssues(pauseDb).some((i) => /needs a cache in the lab/.test(i.message)));
  const flushPg = base.replace('kind: flush-cache,', 'kind: flush-cache, target: postgres,');
  assert.ok(
    specIssues(flushPg).some(
      (i) => i.path === 'schedule.trigger.target' && /expected "redis"/.test(i.message),
    ),
  );
});
