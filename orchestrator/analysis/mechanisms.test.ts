import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  COLD_CACHE_DROP,
  DB_BUSY_SATURATED,
  DB_WAITING_SATURATED,
  ERROR_PATH_SHARE,
  GC_SHARE,
  MECHANISM_LABELS,
  describeMet,
  describeNoneMet,
  measureMechanisms,
  type SustainingFigures,
} from './mechanisms.js';
import { MIN_TREND_S } from './outcome.js';
import { DEFAULT_GOODPUT, MIN_GROWTH_SECONDS } from './hypothesis.js';
import {
  DEFAULT_BACKLOG_CAPACITY_SHARE,
  DEFAULT_P99_GROWTH_MIN_MS,
  DEFAULT_P99_GROWTH_SHARE,
  DEFAULT_STEADY_STATE,
} from './steadyState.js';

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
  assert.equal(
    measureMechanisms({ ...base, gcShare: 0.35 }).at(-1)!.figure,
    'GC time per second 350 ms (garbage collection takes 35% of the time)',
  );
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

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const doc = (name: string): string => readFileSync(`${ROOT}docs/${name}`, 'utf8').replace(/\s+/g, ' ');
/** The one number a pattern's first group captures in `text` (the pattern must match once). */
const numberIn = (text: string, re: RegExp): number => {
  const m = text.match(re);
  assert.ok(m, `docs say nothing matching ${re}`);
  return Number(m[1]);
};

test('the thresholds docs/metrics.md states for each mechanism and the trend test are the constants in code', () => {
  const md = doc('metrics.md');
  const lines = readFileSync(`${ROOT}docs/metrics.md`, 'utf8').split('\n');
  /** The table row of a mechanism, found by the label the report names it with. */
  const row = (label: string): string => {
    const r = lines.find((l) => l.startsWith(`| ${label} |`));
    assert.ok(r, `docs/metrics.md has no row for ${label}`);
    return r;
  };
  // Every mechanism in code has its row, by the label the report names it with.
  for (const label of Object.values(MECHANISM_LABELS)) row(label);
  const cache = row(MECHANISM_LABELS['cold-cache']);
  assert.equal(numberIn(cache, /more than (\d+) points under the baseline/), COLD_CACHE_DROP * 100);
  assert.equal(numberIn(cache, /≥ (\d+)% of the connections busy/), DB_BUSY_SATURATED * 100);
  assert.equal(numberIn(cache, /≥ (\d+) request waiting/), DB_WAITING_SATURATED);
  assert.equal(
    numberIn(row(MECHANISM_LABELS['error-path']), /≥ (\d+)% of the workers' time/),
    ERROR_PATH_SHARE * 100,
  );
  assert.equal(numberIn(row(MECHANISM_LABELS['gc-time']), /≥ (\d+)% of the wall time/), GC_SHARE * 100);
  assert.match(row(MECHANISM_LABELS['load-above-capacity']), /≥ the capacity in use/);
  assert.equal(numberIn(md, /Over the last third of the observation \(at least (\d+) s/), MIN_TREND_S);
  assert.match(md, /Mann–Kendall test with the Hamed–Rao variance correction/);
});

test('the default steady state docs/hypotheses.md states is the one in code', () => {
  const md = doc('hypotheses.md');
  assert.equal(
    numberIn(md, /\*\*goodput ≥ (\d+)% of offered\*\* \(`>= \d+% offered`\)/),
    numberIn(DEFAULT_GOODPUT, /(\d+)%/),
  );
  assert.match(md, new RegExp(`\\(\`${DEFAULT_GOODPUT}\`\\)`));
  assert.equal(
    numberIn(md, /max\(workers × replicas, (\d+)% of a second of capacity\)/),
    DEFAULT_BACKLOG_CAPACITY_SHARE * 100,
  );
  assert.equal(
    numberIn(md, /max\((\d+) ms, \d+% of the window's median per-second p99\)/),
    DEFAULT_P99_GROWTH_MIN_MS,
  );
  assert.equal(
    numberIn(md, /max\(\d+ ms, (\d+)% of the window's median per-second p99\)/),
    DEFAULT_P99_GROWTH_SHARE * 100,
  );
  assert.equal(numberIn(md, /The growth tests need (\d+) s of a window/), MIN_GROWTH_SECONDS);
  // The report's sentence quotes the same words.
  assert.ok(md.includes(`the default one applied (${DEFAULT_STEADY_STATE}; docs/hypotheses.md)`));
});
