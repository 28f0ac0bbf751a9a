import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { RunSummary } from '../../analysis/summary.js';
import { parseExperiment } from '../../spec/load.js';
import { policiesTable } from './policies.js';

// tables/policies.tex: one row per policy the experiment declares; every setting parses back
// to the resolved experiment's value (ms, fractions) and every measured count to summary.json's.

const retryStorm = readFileSync('experiments/retry-storm.yaml', 'utf8');

function experiment(client: string, replicas = '') {
  return parseExperiment(
    retryStorm
      .replace(/^client:\n(?: {2}.*\n)+/m, `client:\n${client}\n`)
      .replace('queue: fifo }', `queue: fifo${replicas} }`),
    'x.yaml',
  );
}

function summary(run: number, policies: Partial<RunSummary['policies']>): RunSummary {
  return {
    run,
    outcomes: { timeout: 135 * run, 'deadline-exceeded': 7 + run },
    policies: {
      clients: 1,
      retries: 1234 * run,
      retriesDeniedByBudget: null,
      retriesCutByDeadline: 3 * run,
      retriesExhausted: 99 + run,
      breakerOpens: null,
      breakerRejected: null,
      breakerOpenS: null,
      throttled: null,
      hedgesSent: null,
      hedgesWon: null,
      hedgesDenied: null,
      cancelledAttempts: 0,
      abandoned: null,
      ...policies,
    },
  } as unknown as RunSummary;
}

/** The table's rows: policy → its settings and measured items, label → LaTeX value. */
function parseRows(
  tex: string,
): Map<string, { settings: Map<string, string>; measured: Map<string, string> }> {
  const body = tex.slice(tex.indexOf('\\midrule') + 8, tex.indexOf('\\bottomrule'));
  const items = (cell: string): Map<string, string> =>
    new Map(
      cell === '--'
        ? []
        : cell.split('; ').map((i) => {
            const m = /^([^:]+): (.+)$/.exec(i);
            assert.ok(m, `item not "label: value": ${i}`);
            return [m[1]!, m[2]!];
          }),
    );
  return new Map(
    body
      .split('\\\\')
      .map((r) => r.trim())
      .filter((r) => r !== '')
      .map((r) => {
        const [policy, settings, measured] = r.split(' & ');
        return [policy!, { settings: items(settings!), measured: items(measured!) }];
      }),
  );
}

/** A \SI or \num value in the table's base units: ms for durations, a fraction for percent. */
function value(v: string): number {
  const m = /^\\(?:SI|num)\{(-?[\d.]+)\}(?:\{(.*)\})?$/.exec(v);
  assert.ok(m, `not a number: ${v}`);
  const x = Number(m[1]);
  const unit = m[2] ?? '';
  return unit === '\\second' ? x * 1000 : unit === '\\percent' ? x / 100 : x;
}

/** Counts per run, "/" between runs. */
const counts = (v: string): (number | null)[] => v.split(' / ').map((c) => (c === '--' ? null : value(c)));

test('every policy the experiment declares has a row whose settings parse back to the resolved experiment', () => {
  const e = experiment(
    [
      '  timeout: 750ms',
      '  deadline: 2.5s',
      '  propagateDeadline: false',
      '  retry: { policy: exponential, maxAttempts: 5, base: 40ms, cap: 1.5s, jitter: equal, retryOn: [timeout, 429], otherReplica: true }',
      '  budget: { style: ratio, ratio: 12.5%, burst: 7 }',
      '  breaker: { failureRatio: 40%, window: 10s, minVolume: 25, open: 3s, probes: 2 }',
      '  throttle: { k: 1.5, window: 30s }',
      '  hedge: { delay: 80ms, max: 2 }',
      '  balance: p2c',
      '  abandon: { fraction: 25%, patience: { dist: lognormal, mean: 2s, sigma: 0.5 } }',
      '  instances: 3',
    ].join('\n'),
    ', replicas: 2',
  );
  const c = e.client;
  const measured = { hedgesSent: 321, hedgesWon: 45, hedgesDenied: 6, throttled: 8, abandoned: 7 };
  const t = policiesTable('retry-storm', e, [{ index: 1, summary: summary(1, measured) }]);
  assert.ok(t.tex.includes('\\label{tab:policies}'));
  assert.match(t.tex, /\\toprule[\s\S]*\\midrule[\s\S]*\\bottomrule/);
  const rows = parseRows(t.tex);
  assert.deepEqual(
    [...rows.keys()],
    [
      'Timeout',
      'Deadline',
      'Retries',
      'Retry budget',
      'Circuit breaker',
      'Adaptive throttling',
      'Hedging',
      'Load balancing',
      'Abandonment',
      'Clients',
    ],
  );
  const s = (policy: string, label: string): string => {
    const v = rows.get(policy)!.settings.get(label);
    assert.ok(
      v !== undefined,
      `${policy}: no ${label} in ${[...rows.get(policy)!.settings.keys()].join(' | ')}`,
    );
    return v;
  };
  assert.equal(value(s('Timeout', 'per attempt')), c.timeout);
  assert.equal(value(s('Deadline', 'per request')), c.deadline);
  assert.equal(s('Deadline', 'propagated in x-deadline-ms'), 'no');
  const r = c.retry;
  assert.equal(value(s('Retries', 'max.\\ attempts')), r.maxAttempts);
  assert.equal(s('Retries', 'backoff'), r.policy);
  assert.equal(value(s('Retries', 'base')), r.base);
  assert.equal(value(s('Retries', 'cap')), r.cap);
  assert.equal(s('Retries', 'jitter'), r.jitter);
  assert.equal(s('Retries', 'on'), r.retryOn!.join(', '));
  assert.equal(s('Retries', 'to another replica'), 'yes');
  assert.equal(s('Retry budget', 'style'), 'ratio');
  assert.equal(value(s('Retry budget', 'ratio')), c.budget!.ratio);
  assert.equal(value(s('Retry budget', 'burst (tokens)')), c.budget!.burst);
  const b = c.breaker!;
  assert.equal(value(s('Circuit breaker', 'failure ratio')), b.failureRatio);
  assert.equal(value(s('Circuit breaker', 'window')), b.window);
  assert.equal(value(s('Circuit breaker', 'min.\\ volume')), b.minVolume);
  assert.equal(value(s('Circuit breaker', 'open')), b.open);
  assert.equal(value(s('Circuit breaker', 'probes')), b.probes);
  assert.equal(value(s('Adaptive throttling', 'K')), c.throttle!.k);
  assert.equal(value(s('Adaptive throttling', 'window')), c.throttle!.window);
  assert.equal(value(s('Hedging', 'after')), c.hedge!.delay);
  assert.equal(value(s('Hedging', 'max.\\ per try')), c.hedge!.max);
  assert.equal(s('Load balancing', 'policy'), 'p2c');
  assert.equal(value(s('Load balancing', 'api replicas')), 2);
  const a = c.abandon!;
  assert.equal(value(s('Abandonment', 'fraction of users')), a.fraction);
  assert.equal(s('Abandonment', 'patience'), a.patience.dist);
  assert.equal(value(s('Abandonment', 'mean')), a.patience.mean);
  assert.equal(value(s('Abandonment', '$\\sigma$')), a.patience.sigma);
  assert.equal(value(s('Clients', 'independent instances')), c.instances);
  const m = (policy: string, label: string): number => value(rows.get(policy)!.measured.get(label)!);
  assert.equal(m('Hedging', 'hedges sent'), measured.hedgesSent);
  assert.equal(m('Hedging', 'won'), measured.hedgesWon);
  assert.equal(m('Hedging', 'refused by the budget'), measured.hedgesDenied);
  assert.equal(m('Adaptive throttling', 'attempts refused'), measured.throttled);
  assert.equal(m('Abandonment', 'requests abandoned'), measured.abandoned);
  assert.equal(m('Deadline', 'answered after it'), 8);
  assert.equal(m('Deadline', 'retries cut by it'), 3);
});

test('measured counts parse back to each run’s summary.json, in run order; a policy not declared has no row', () => {
  const e = experiment(
    [
      '  timeout: 500ms',
      '  retry: { policy: fixed, maxAttempts: 3, delay: 200ms }',
      '  budget: { style: aws, capacity: 100 }',
      '  breaker: { failureRatio: 50%, window: 5s, open: 2s }',
    ].join('\n'),
  );
  const runs = [1, 2].map((i) => ({
    index: i,
    summary: summary(i, {
      retriesDeniedByBudget: 11 * i,
      breakerOpens: i,
      breakerRejected: 1674 * i,
      breakerOpenS: 4.0049 * i,
    }),
  }));
  const t = policiesTable('retry-storm', e, runs);
  assert.match(t.tex, /runs 1, 2 in that order, separated by \//);
  const rows = parseRows(t.tex);
  assert.deepEqual([...rows.keys()], ['Timeout', 'Retries', 'Retry budget', 'Circuit breaker']);
  const m = (policy: string, label: string) => rows.get(policy)!.measured.get(label)!;
  const per = (f: (s: RunSummary) => number | null) => runs.map((r) => f(r.summary));
  assert.deepEqual(
    counts(m('Timeout', 'requests failed by timeout')),
    per((s) => s.outcomes.timeout),
  );
  assert.deepEqual(
    counts(m('Retries', 'retries scheduled')),
    per((s) => s.policies.retries),
  );
  assert.deepEqual(
    counts(m('Retries', 'not retried, attempts exhausted')),
    per((s) => s.policies.retriesExhausted),
  );
  assert.deepEqual(
    counts(m('Retry budget', 'retries refused')),
    per((s) => s.policies.retriesDeniedByBudget),
  );
  assert.deepEqual(
    counts(m('Circuit breaker', 'opens')),
    per((s) => s.policies.breakerOpens),
  );
  assert.deepEqual(
    counts(m('Circuit breaker', 'attempts refused')),
    per((s) => s.policies.breakerRejected),
  );
  // Time open is measured: three significant figures.
  assert.deepEqual(
    counts(m('Circuit breaker', 'time open (client-seconds)')).map((v) => v! / 1000),
    per((s) => Number(s.policies.breakerOpenS!.toPrecision(3))),
  );
  // The aws budget's defaults, as the client was built with them.
  const s = rows.get('Retry budget')!.settings;
  assert.deepEqual(
    ['capacity (tokens)', 'retry cost', 'timeout cost', 'per success'].map((l) => value(s.get(l)!)),
    [100, 5, 10, 1],
  );
  assert.equal(value(rows.get('Retries')!.settings.get('delay')!), 200);
});

test('a client that does not retry: one attempt, nothing measured of retries', () => {
  const rows = parseRows(
    policiesTable('x', experiment('  timeout: 1s\n  retry: { policy: none }'), [
      { index: 1, summary: summary(1, {}) },
    ]).tex,
  );
  assert.deepEqual([...rows.keys()], ['Timeout', 'Retries']);
  assert.equal(value(rows.get('Timeout')!.settings.get('per attempt')!), 1000);
  assert.equal(value(rows.get('Retries')!.settings.get('max.\\ attempts')!), 1);
  assert.equal(rows.get('Retries')!.measured.size, 0);
});
