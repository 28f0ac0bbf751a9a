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

test("db-loss gives the api a query timeout and retries; the schema refuses a retry without a timeout and a timeout the query cannot meet, at the field's line", () => {
  const base = read('db-loss.yaml');
  assert.deepEqual(labCacheConfig(parseExperiment(base, 'db-loss.yaml').lab!).cache?.retry, {
    timeoutMs: 200,
    maxAttempts: 3,
  });
  // A timeout without retries: one attempt; neither: no policy (and the flags stay as before).
  const once = base.replace(/\n {4}retry: \{ maxAttempts: 3 \}/, '');
  assert.deepEqual(labCacheConfig(parseExperiment(once, 'x.yaml').lab!).cache?.retry, {
    timeoutMs: 200,
    maxAttempts: 1,
  });
  assert.equal(
    labCacheConfig(parseExperiment(read('db-partition.yaml'), 'x.yaml').lab!).cache?.retry,
    undefined,
  );
  const noTimeout = base.replace(/\n {4}timeout: 200ms/, '');
  const a = specIssues(noTimeout).find((i) => i.path === 'lab.db.retry');
  assert.ok(a && /needs lab.db.timeout/.test(a.message), JSON.stringify(specIssues(noTimeout)));
  assert.equal(a.line, noTimeout.split('\n').findIndex((l) => l.includes('retry: { maxAttempts')) + 1);
  const tooShort = base.replace('timeout: 200ms', 'timeout: 20ms');
  const b = specIssues(tooShort).find((i) => i.path === 'lab.db.timeout');
  assert.ok(
    b && /not longer than the query's declared 20 ms/.test(b.message),
    JSON.stringify(specIssues(tooShort)),
  );
  assert.equal(b.line, tooShort.split('\n').findIndex((l) => l.includes('timeout: 20ms')) + 1);
});
