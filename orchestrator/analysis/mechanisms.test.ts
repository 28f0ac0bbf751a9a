import { test } from 'node:test';
import assert from 'node:assert/strict';
import { describeMet, describeNoneMet, measureMechanisms, type SustainingFigures } from './mechanisms.js';

const base: SustainingFigures = {
  capacityPerS: 400,
  receivedPerS: 320,
  attemptsPerS: 320,
  amplification: 1,
  amplificationServer: 1,
  cacheHitRatio: null,
  baselineCacheHitRatio: null,
  errorRatio: 0.9,
};

const met = (f: SustainingFigures): string[] =>
  measureMechanisms(f)
    .filter((m) => m.met)
    .map((m) => m.name);

test('a shortfall with amplification 1 and no capacity loss meets no mechanism', () => {
  // The retry-storm-no-retry case of issue 32: 279.6/s received against 400/s.
  const ms = measureMechanisms({ ...base, receivedPerS: 279.6, attemptsPerS: 279.6 });
  assert.deepEqual(
    ms.map((m) => [m.name, m.met]),
    [['load-above-capacity', false]],
  );
  assert.equal(describeMet(ms), null);
  assert.equal(
    describeNoneMet(ms),
    'no sustaining effect found: the api receives 279.6/s against a capacity of 400/s (amplification 1) (threshold: requests received per second ≥ the capacity (400/s))',
  );
});

test('a storm with amplification 4 meets the load mechanism, named with its figure', () => {
  const ms = measureMechanisms({ ...base, receivedPerS: 1118, attemptsPerS: 1120, amplificationServer: 4 });
  assert.deepEqual(met({ ...base, receivedPerS: 1118, amplificationServer: 4 }), ['load-above-capacity']);
  assert.equal(describeMet(ms), 'the api receives 1,118/s against a capacity of 400/s (amplification 4)');
  // Unscraped: the client's attempts, said to be client-side.
  const client = measureMechanisms({ ...base, receivedPerS: null, attemptsPerS: 1120, amplification: 4 });
  assert.match(
    describeMet(client)!,
    /^the client sends 1,120 attempts\/s .* \(client-side: no server metrics\)$/,
  );
});

test('a cold cache counts only with the database saturated', () => {
  const cold = { ...base, cacheHitRatio: 0.1, baselineCacheHitRatio: 0.95 };
  assert.deepEqual(met({ ...cold, dbBusyShare: 1, dbWaiting: 0 }), ['cold-cache']);
  assert.deepEqual(met({ ...cold, dbBusyShare: 0.5, dbWaiting: 3 }), ['cold-cache']);
  assert.deepEqual(met({ ...cold, dbBusyShare: 0.5, dbWaiting: 0.2 }), []);
  assert.deepEqual(met({ ...cold }), [], 'the database load not scraped: not shown');
  // A drop of 20 points or less is not a collapse.
  assert.deepEqual(met({ ...cold, cacheHitRatio: 0.75, dbBusyShare: 1 }), []);
  const m = measureMechanisms({ ...cold, dbBusyShare: 1, dbWaiting: 0 }).find(
    (x) => x.name === 'cold-cache',
  )!;
  assert.equal(
    m.figure,
    'cache hit ratio 10% (baseline 95%), the database saturated (100% of its connections busy, 0 requests waiting for one)',
  );
});

test('error paths count from a fifth of the workers’ time; replicas down and GC time when measured', () => {
  assert.deepEqual(met({ ...base, errorPathShare: 0.64 }), ['error-path']);
  assert.deepEqual(met({ ...base, errorPathShare: 0.19 }), []);
  assert.deepEqual(met({ ...base, replicaCompleted: [900, null, 880], seconds: 40 }), ['replicas-down']);
  assert.match(
    measureMechanisms({ ...base, replicaCompleted: [900, 0, 880], seconds: 40 }).at(-1)!.figure,
    /^api\[1\] completed nothing over the last 40 s \(1 of 3 replicas down\)$/,
  );
  assert.deepEqual(met({ ...base, replicaCompleted: [900, 12, 880] }), []);
  assert.deepEqual(met({ ...base, gcShare: 0.35 }), ['gc-time']);
  // Not measured: no entry at all.
  assert.deepEqual(
    measureMechanisms(base).map((m) => m.name),
    ['load-above-capacity'],
  );
});

test('several met: the load first, in MECHANISMS order', () => {
  const text = describeMet(
    measureMechanisms({ ...base, receivedPerS: 500, errorPathShare: 0.64, amplificationServer: 1.5 }),
  );
  assert.equal(
    text,
    'the api receives 500/s against a capacity of 400/s (amplification 1.5); the workers spend 64% of their time on error paths',
  );
});
