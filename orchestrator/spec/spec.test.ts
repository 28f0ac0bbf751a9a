import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { didYouMean, parseExperiment } from './load.js';
import { connectionCap, nominalCapacityPerS, planRun } from './plan.js';
import { apiReplicas, checkReplicas, clientModel, describeClient } from '../run/client.js';
import { overReplicas } from '../../bench/transport/replicas.js';
import { VirtualClock } from '../../foundation/clock.js';
import { ScriptedTransport } from '../../test/helpers/fakeTransport.js';
import { parseDuration, parseMultiple, parsePercent, parseRate } from '../../foundation/units.js';
import { specIssues } from '../../test/helpers/specIssues.js';

const retryStorm = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');

test('units are parsed at the edge', () => {
  assert.deepEqual(parseDuration('500ms'), { ok: true, value: 500 });
  assert.deepEqual(parseDuration('2s'), { ok: true, value: 2000 });
  assert.deepEqual(parseDuration('1.5m'), { ok: true, value: 90_000 });
  assert.equal(parseDuration('500').ok, false); // a unit is always written
  assert.equal(parseDuration(500).ok, false);
  assert.equal(parseDuration('-2s').ok, false);
  assert.deepEqual(parseRate('280/s'), { ok: true, value: { perS: 280 } });
  assert.deepEqual(parseRate('600/m'), { ok: true, value: { perS: 10 } });
  assert.deepEqual(parseRate('70% capacity'), { ok: true, value: { capacityFraction: 0.7 } });
  assert.equal(parseRate('fast').ok, false);
  assert.deepEqual(parsePercent('10%'), { ok: true, value: 0.1 });
  assert.deepEqual(parseMultiple('5x'), { ok: true, value: 5 });
});

test('retry-storm.yaml resolves to 280/s against a nominal 400/s', () => {
  const e = parseExperiment(retryStorm, 'retry-storm.yaml');
  assert.equal(nominalCapacityPerS(e), 400);
  const p = planRun(e, { scale: 1, run: 1 });
  assert.ok(Math.abs(p.ratePerS - 280) < 1e-9);
  assert.equal(p.seed, 42);
  assert.deepEqual(p.phases.trigger, { startMs: 90_000, endMs: 100_000 });
  assert.equal(p.totalMs, 280_000);
  assert.ok(connectionCap(p) >= 280 * 4 * 0.5);
});

test('--scale multiplies every duration of the schedule and the recovery criterion, and nothing else', () => {
  const e = parseExperiment(retryStorm, 'retry-storm.yaml');
  const p = planRun(e, { scale: 0.2, run: 1 });
  assert.deepEqual(p.phases.warmup, { startMs: 0, endMs: 6000 });
  assert.deepEqual(p.phases.baseline, { startMs: 6000, endMs: 18_000 });
  assert.deepEqual(p.phases.trigger, { startMs: 18_000, endMs: 20_000 });
  assert.deepEqual(p.phases.observe, { startMs: 20_000, endMs: 56_000 });
  assert.deepEqual(p.recovery, { within: 5, tolerance: 0.15, windowMs: 1000, holdMs: 2000 });
  assert.ok(Math.abs(p.ratePerS - 280) < 1e-9);
  assert.equal(p.experiment.client.timeout, 500);
  assert.equal(p.experiment.lab!.api.work.mean, 20);
});

test('repetitions get distinct, reproducible seeds; run 1 keeps the declared seed', () => {
  const e = parseExperiment(retryStorm, 'retry-storm.yaml');
  const seeds = [1, 2, 3].map((run) => planRun(e, { scale: 1, run }).seed);
  assert.equal(seeds[0], 42);
  assert.equal(new Set(seeds).size, 3);
  assert.deepEqual(
    seeds,
    [1, 2, 3].map((run) => planRun(e, { scale: 1, run }).seed),
  );
});

test('every problem is reported at once, with its line, column and field path', () => {
  const issues = specIssues(
    [
      'name: x',
      'lab:',
      '  api: { workers: 0, wrok: 1 }',
      'load: { arrival: poison, rate: 12 }',
      'client: { timeout: 5 }',
      'seeed: 3',
      '',
    ].join('\n'),
  );
  const by = new Map(issues.map((i) => [i.path, i]));
  assert.equal(by.get('lab.api.workers')?.line, 3);
  assert.match(by.get('lab.api.workers')!.message, /at least 1/);
  assert.match(by.get('lab.api.wrok')!.message, /did you mean "work"/);
  assert.equal(by.get('lab.api.wrok')?.line, 3);
  assert.match(by.get('load.arrival')!.message, /poisson/);
  assert.match(by.get('load.rate')!.message, /expected a rate/);
  assert.match(by.get('client.timeout')!.message, /expected a duration/);
  assert.equal(by.get('seeed')?.line, 6);
  assert.match(by.get('seeed')!.message, /did you mean "seed"/);
  assert.match(by.get('schedule')!.message, /required/);
  assert.ok(issues.length >= 8, `${issues.length} issues`);
});

test('bad thresholds, unknown trigger kinds and out-of-range values are refused', () => {
  const base = retryStorm;
  const swap = (from: string, to: string) => {
    assert.ok(base.includes(from), from);
    return specIssues(base.replace(from, to));
  };
  assert.match(swap("goodput: '>= 95% offered'", "goodput: '>= 95%'")[0]!.message, /offered/);
  assert.match(swap("p99: '<= 400ms'", "p99: '<= fast'")[0]!.message, /not a duration/);
  assert.equal(swap('kind: pause', 'kind: explode')[0]!.path, 'schedule.trigger.kind');
  assert.equal(swap('target: api', 'target: mainframe')[0]!.path, 'schedule.trigger.target');
  assert.match(swap('workers: 8', 'workers: 1000000000')[0]!.message, /at most/);
  assert.match(swap('timeout: 500ms', 'timeout: 0ms')[0]!.message, /greater than zero/);
  assert.match(swap('seed: 42', 'seed: -1')[0]!.message, /at least 0/);
});

test('syntax errors, empty and binary files, and alias bombs are refused quickly with a location', () => {
  const syntax = specIssues('name: [\n');
  assert.equal(syntax[0]!.line, 2);
  assert.match(syntax[0]!.message, /YAML syntax/);
  assert.match(specIssues('')[0]!.message, /empty/);
  assert.match(specIssues('# only a comment\n')[0]!.message, /empty/);
  assert.match(specIssues('\u0000\u0001binary')[0]!.message, /not text/);
  assert.match(specIssues('- a\n- b\n')[0]!.message, /top level must be a mapping/);
  const lines = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (const [n, prev] of [
    ['b', 'a'],
    ['c', 'b'],
    ['d', 'c'],
    ['e', 'd'],
    ['f', 'e'],
    ['g', 'f'],
  ])
    lines.push(`${n}: &${n} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  // 9^7 nodes if expanded: refused by the alias-count limit before it is built.
  assert.match(specIssues(lines.join('\n'))[0]!.message, /alias/i);
  assert.match(specIssues('name: x\nname: y\n')[0]!.message, /YAML syntax/);
});

test('did-you-mean suggests only close names', () => {
  assert.equal(didYouMean('wrok', ['work', 'workers', 'queue']), 'work');
  assert.equal(didYouMean('Seed', ['seed']), 'seed');
  assert.equal(didYouMean('zzzzzz', ['seed', 'name']), undefined);
});

// ---- the client section: policies ----

const experimentFile = (name: string) =>
  readFileSync(new URL(`../../../experiments/${name}.yaml`, import.meta.url), 'utf8');

test('every experiment file validates; the two spine experiments keep their client model', () => {
  for (const name of [
    'retry-storm',
    'retry-storm-no-retry',
    'retry-storm-backoff',
    'retry-storm-budget',
    'retry-storm-breaker',
    'hedging-amplification',
  ])
    parseExperiment(experimentFile(name), `${name}.yaml`);
  const storm = clientModel(parseExperiment(retryStorm, 'retry-storm.yaml').client);
  assert.deepEqual(storm, {
    instances: 1,
    replicas: 1,
    timeoutMs: 500,
    retry: {
      maxAttempts: 4,
      backoff: { kind: 'immediate' },
      retryOn: ['timeout', 'connection', '5xx', '429'],
    },
    propagateDeadline: true,
  });
  const none = clientModel(parseExperiment(experimentFile('retry-storm-no-retry'), 'x.yaml').client);
  assert.equal(none.retry.maxAttempts, 1);
  assert.equal(none.budget ?? none.breaker ?? none.hedge ?? none.throttle ?? none.abandon, undefined);
});

test('the policy fields resolve to a client model in ms and fractions', () => {
  const e = parseExperiment(
    retryStorm.replace(
      '  retry: { policy: immediate, maxAttempts: 4 }',
      [
        '  deadline: 3s',
        '  retry: { policy: exponential, maxAttempts: 5, base: 50ms, cap: 1s, jitter: decorrelated, retryOn: [timeout, 429] }',
        '  budget: { style: ratio, ratio: 5%, burst: 20 }',
        '  breaker: { failureRatio: 40%, window: 10s, open: 3s }',
        '  throttle: { k: 1.5 }',
        '  hedge: { delay: 80ms }',
        '  abandon: { fraction: 25%, patience: { dist: lognormal, mean: 2s, sigma: 0.5 } }',
        '  instances: 100',
      ].join('\n'),
    ),
    'x.yaml',
  );
  assert.deepEqual(clientModel(e.client), {
    instances: 100,
    replicas: 1,
    timeoutMs: 500,
    retry: {
      maxAttempts: 5,
      backoff: { kind: 'exponential', baseMs: 50, capMs: 1000, jitter: 'decorrelated' },
      retryOn: ['timeout', '429'],
    },
    budget: { style: 'ratio', ratio: 0.05, burst: 20 },
    breaker: { failureRatio: 0.4, windowMs: 10_000, minVolume: 20, openMs: 3000, probes: 3 },
    throttle: { k: 1.5, windowMs: 120_000 },
    hedge: { delayMs: 80, maxHedges: 1 },
    abandon: { fraction: 0.25, patience: { dist: 'lognormal', meanMs: 2000, sigma: 0.5 } },
    propagateDeadline: true,
  });
  const plan = planRun(e, { scale: 1, run: 1 });
  // Hedges double the attempts an origin can have in flight.
  assert.ok(connectionCap(plan) >= 280 * 5 * 2 * 0.5);
  assert.match(
    describeClient(e.client),
    /decorrelated jitter.*retry budget 5% of requests.*hedging after 80ms.*split over 100 clients/,
  );
});

test('policy fields that do not fit the chosen policy are refused, with their path', () => {
  const withRetry = (retry: string) =>
    specIssues(retryStorm.replace('retry: { policy: immediate, maxAttempts: 4 }', retry));
  const p1 = withRetry('retry: { policy: exponential, maxAttempts: 4, delay: 100ms }');
  assert.deepEqual(p1.map((i) => i.path).sort(), [
    'client.retry.base',
    'client.retry.cap',
    'client.retry.delay',
  ]);
  assert.match(p1.find((i) => i.path === 'client.retry.delay')!.message, /only to policy: fixed/);
  assert.match(withRetry('retry: { policy: fixed, maxAttempts: 3 }')[0]!.message, /needs a delay/);
  assert.match(
    withRetry('retry: { policy: exponential, maxAttempts: 3, base: 2s, cap: 1s }')[0]!.message,
    /at least base/,
  );
  const r400 = withRetry('retry: { policy: immediate, retryOn: [400] }')[0]!;
  assert.equal(r400.path, 'client.retry.retryOn.0');
  assert.match(r400.message, /never retried/);
  assert.match(
    withRetry('retry: { policy: exponential, base: 1s, cap: 2s, jitter: wild }')[0]!.message,
    /full/,
  );
  const withPart = (part: string) =>
    specIssues(
      retryStorm.replace(
        '  retry: { policy: immediate, maxAttempts: 4 }',
        `  retry: { policy: immediate, maxAttempts: 4 }\n  ${part}`,
      ),
    );
  const b = withPart('budget: { style: ratio, ratio: 10%, capacity: 500 }');
  assert.equal(b[0]!.path, 'client.budget.capacity');
  assert.match(b[0]!.message, /does not apply to style: ratio/);
  assert.match(withPart('budget: { style: ratio }')[0]!.message, /needs a ratio/);
  const br = withPart('breaker: { failureRatio: 50%, window: 5s, open: 1s, probs: 3 }');
  assert.match(br[0]!.message, /did you mean "probes"/);
  assert.equal(br[0]!.line, 18);
  assert.match(withPart('hedge: { delay: 0ms }')[0]!.message, /greater than zero/);
  assert.match(
    withPart('abandon: { fraction: 150%, patience: { dist: constant, mean: 1s } }')[0]!.message,
    /between 0% and 100%/,
  );
  assert.match(withPart('instances: 0')[0]!.message, /at least 1/);
  const lb = withPart('balance: fastest')[0]!;
  assert.equal(lb.path, 'client.balance');
  assert.match(lb.message, /round-robin, random, least-outstanding, p2c, least-latency/);
  const other = withRetry('retry: { policy: none, otherReplica: true }')[0]!;
  assert.equal(other.path, 'client.retry.otherReplica');
  assert.match(other.message, /policy is none/);
});

test('client.balance and retry.otherReplica are accepted with the one api replica the lab has', () => {
  const e = parseExperiment(
    retryStorm.replace(
      '  retry: { policy: immediate, maxAttempts: 4 }',
      '  retry: { policy: immediate, maxAttempts: 4, otherReplica: true }\n  balance: least-latency',
    ),
    'x.yaml',
  );
  // No lab.api.replicas: one replica, and nothing invented for the lab.
  assert.equal(apiReplicas(e), 1);
  assert.equal('replicas' in e.lab!.api, false);
  const m = clientModel(e.client, apiReplicas(e));
  assert.equal(m.replicas, 1);
  assert.equal(m.balance, 'least-latency');
  assert.equal(m.retry.otherReplica, true);
  assert.match(
    describeClient(e.client),
    /each to another replica.*least-latency balancing over the api replicas/,
  );
  // The runtime's transport must reach the replicas the client balances over.
  const t = new ScriptedTransport(new VirtualClock(), () => 1);
  assert.doesNotThrow(() => checkReplicas(1, t));
  assert.throws(
    () => checkReplicas(3, t),
    /balances over 3 api replicas, but this runtime's transport reaches 1/,
  );
  assert.doesNotThrow(() => checkReplicas(3, overReplicas([t, t, t])));
});

test('the load has exactly one shape, and its parts are checked', () => {
  const base = retryStorm;
  const swapLoad = (lines: string) => specIssues(base.replace(/load:\n(?: {2}.*\n)+/, `load:\n${lines}`));
  assert.match(swapLoad('  arrival: poisson\n')[0]!.message, /give the offered load as one of/);
  assert.match(
    swapLoad('  rate: 10/s\n  waves: { mean: 10/s, amplitude: 5/s, period: 10s }\n')[0]!.message,
    /give only one of rate, waves/,
  );
  assert.match(
    swapLoad('  arrival: constant\n  onOff: { on: 1s, off: 1s, rateOn: 10/s }\n')[0]!.message,
    /Poisson process/,
  );
  const mix = swapLoad(
    '  rate: 10/s\n  mix:\n    - { name: a, share: 60% }\n    - { name: b, share: 30%, cost: nope }\n',
  );
  assert.ok(mix.some((i) => i.path === 'load.mix' && /sum to 100%/.test(i.message)));
  assert.ok(mix.some((i) => i.path === 'load.mix.1.cost' && /no cost class "nope"/.test(i.message)));
  assert.match(swapLoad('  phases:\n    - { duration: 1s, rat: 10/s }\n')[0]!.message, /.+/);
});

test('phases, waves and on/off resolve against capacity and scale like the schedule', () => {
  const withLoad = (lines: string) =>
    parseExperiment(retryStorm.replace(/load:\n(?: {2}.*\n)+/, `load:\n${lines}`), 'x.yaml');
  const p = planRun(
    withLoad(
      '  arrival: constant\n  phases:\n    - { duration: 100s, rate: 50% capacity }\n    - { duration: 100s, from: 200/s, to: 400/s }\n',
    ),
    { scale: 0.5, run: 1 },
  );
  assert.equal(p.load.arrival.kind, 'profile');
  if (p.load.arrival.kind !== 'profile') return;
  // 280 s of run at scale 0.5 = 140 s: 50 s at 200/s, 50 s ramping 200→400/s, then 40 s held at 400/s.
  assert.deepEqual(
    p.load.arrival.segments.map((s) => [s.durationMs, s.fromPerS, s.toPerS]),
    [
      [50_000, 200, 200],
      [50_000, 200, 400],
      [40_000, 400, 400],
    ],
  );
  assert.equal(p.load.peakPerS, 400);
  assert.ok(Math.abs(p.ratePerS - (10_000 + 15_000 + 16_000) / 140) < 1e-9);
  const w = planRun(withLoad('  waves: { mean: 50% capacity, amplitude: 100/s, period: 20s }\n'), {
    scale: 0.5,
    run: 1,
  });
  assert.deepEqual(w.load.arrival, { kind: 'waves', meanPerS: 200, amplitudePerS: 100, periodMs: 10_000 });
  const c = planRun(withLoad('  closedLoop: { users: 20, think: { dist: constant, mean: 100ms } }\n'), {
    scale: 1,
    run: 1,
  });
  assert.equal(c.load.model, 'closed');
  assert.equal(connectionCap(c), 20);
});
