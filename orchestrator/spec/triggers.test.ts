import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseExperiment } from './load.js';
import { planRun } from './plan.js';
import { describeTriggers } from './sections/schedule.js';
import { createTrigger } from '../trigger/registry.js';
import { expectedOrigins } from './dryRun.js';
import { specIssues } from '../../test/helpers/specIssues.js';

const retryStorm = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');
const cacheStampede = readFileSync(
  new URL('../../../experiments/cache-stampede.yaml', import.meta.url),
  'utf8',
);

/** retry-storm with its one trigger replaced by the YAML lines given. */
function withTriggers(lines: string, base = retryStorm): string {
  return base.replace(/^ {2}trigger: .*$/m, `  triggers:\n${lines}`);
}

test('triggers without `at` follow one another; with `at` they may overlap; the window spans them all', () => {
  const e = parseExperiment(
    withTriggers(
      [
        '    - { kind: pause, target: api, duration: 10s }',
        '    - { kind: load-spike, factor: 2x, duration: 5s }',
        '    - { kind: pause, target: api, duration: 4s, at: 12s }',
      ].join('\n'),
    ),
    'x.yaml',
  );
  const p = planRun(e, { scale: 0.5, run: 1 });
  // baseline ends at (30 + 60) × 0.5 = 45 s
  assert.deepEqual(
    p.triggers.map((t) => [t.spec.kind, t.startMs, t.endMs]),
    [
      ['pause', 45_000, 50_000],
      ['load-spike', 50_000, 52_500],
      ['pause', 51_000, 53_000],
    ],
  );
  assert.deepEqual(p.phases.trigger, { startMs: 45_000, endMs: 53_000 });
  assert.deepEqual(p.phases.observe, { startMs: 53_000, endMs: 53_000 + 90_000 });
  assert.match(
    describeTriggers(e.schedule.triggers, 0.5),
    /pause api for 5 s .*load spike x2 for 2.5 s \(from \+5 s\).*from \+6 s/,
  );
});

test('a load spike multiplies the offered rate over its span, and nowhere else', () => {
  const e = parseExperiment(
    withTriggers('    - { kind: load-spike, factor: 4x, duration: 30s }').replace(
      'arrival: poisson',
      'arrival: constant',
    ),
    'x.yaml',
  );
  const p = planRun(e, { scale: 1, run: 1 });
  const spike = p.triggers[0]!;
  const count = (startMs: number, endMs: number): number | null =>
    expectedOrigins(p.load.arrival, { startMs, endMs });
  assert.equal(count(spike.startMs, spike.endMs), 280 * 4 * 30);
  assert.equal(count(0, spike.startMs), 280 * (spike.startMs / 1000));
  assert.equal(count(spike.endMs, p.totalMs), 280 * ((p.totalMs - spike.endMs) / 1000));
  assert.equal(p.load.peakPerS, 280 * 4);
});

test('a trigger on the cache, the database or their links needs them in the lab; the first trigger starts at the baseline end', () => {
  const onLink = specIssues(
    withTriggers('    - { kind: latency, link: postgres, latency: 50ms, duration: 5s }'),
  );
  assert.ok(
    onLink.some((i) => i.path === 'schedule.triggers.0.link' && /needs a cache in the lab/.test(i.message)),
  );
  const late = specIssues(withTriggers('    - { kind: pause, target: api, duration: 5s, at: 3s }'));
  assert.ok(late.some((i) => i.path === 'schedule.triggers.0.at'));
  const both = specIssues(
    retryStorm.replace(
      /^ {2}observe:/m,
      '  triggers: [{ kind: pause, target: api, duration: 1s }]\n  observe:',
    ),
  );
  assert.ok(both.some((i) => /either trigger or triggers/.test(i.message)));
  const unknownLink = specIssues(
    withTriggers(
      '    - { kind: partition, link: mysql, duration: 5s }',
      cacheStampede.replace(/^ {2}trigger: .*$/m, '  trigger: { kind: pause, target: api, duration: 1s }'),
    ),
  );
  assert.ok(
    unknownLink.some((i) => i.path === 'schedule.triggers.0.link'),
    JSON.stringify(unknownLink),
  );
  const spikeOnClosed = specIssues(
    withTriggers('    - { kind: load-spike, factor: 2x, duration: 5s }').replace(
      /^ {2}rate: .*$/m,
      '  closedLoop: { users: 10, think: { dist: constant, mean: 10ms } }',
    ),
  );
  assert.ok(
    spikeOnClosed.some((i) => /a load spike multiplies/.test(i.message)),
    JSON.stringify(spikeOnClosed),
  );
});

test('each link fault is a toxic (or a disabled proxy) named after its place in the schedule', () => {
  const e = parseExperiment(
    withTriggers(
      [
        '    - { kind: latency, link: redis, latency: 100ms, jitter: 20ms, duration: 2s }',
        '    - { kind: timeout, link: postgres, duration: 2s, toxicity: 50% }',
        '    - { kind: bandwidth, link: postgres, rate: 10, stream: upstream, duration: 2s }',
        '    - { kind: reset-peer, link: redis, duration: 2s }',
        '    - { kind: slow-close, link: redis, delay: 300ms, duration: 2s }',
        '    - { kind: partition, link: redis, duration: 2s }',
        '    - { kind: kill, target: redis, duration: 2s }',
        '    - { kind: stop, target: postgres, duration: 2s }',
      ].join('\n'),
      cacheStampede.replace(/^ {2}trigger: .*$/m, '  trigger: { kind: pause, target: api, duration: 1s }'),
    ),
    'x.yaml',
  );
  const t = e.schedule.triggers.map((s, i) => createTrigger(s, i));
  assert.deepEqual(
    t.map((x) => [x.kind, x.target]),
    [
      ['latency', 'link:redis'],
      ['timeout', 'link:postgres'],
      ['bandwidth', 'link:postgres'],
      ['reset-peer', 'link:redis'],
      ['slow-close', 'link:redis'],
      ['partition', 'link:redis'],
      ['kill', 'redis'],
      ['stop', 'postgres'],
    ],
  );
  assert.match(t[0]!.describe(), /latency 100, jitter 20/);
  assert.match(t[1]!.describe(), /timeout 0, toxicity 0.5/);
  assert.match(t[2]!.describe(), /upstream, rate 10/);
  const lab = { faultProxyApi: 'http://127.0.0.1:9' } as Parameters<(typeof t)[0]['undoRecipe']>[0];
  assert.deepEqual(t[0]!.undoRecipe(lab), {
    kind: 'http',
    method: 'DELETE',
    url: 'http://127.0.0.1:9/proxies/redis/toxics/metabench_0_latency',
    what: 'remove toxic metabench_0_latency from link redis',
  });
  assert.equal(t[5]!.undoRecipe(lab).kind, 'http');
});

test('provider-outage needs the LLM provider in the lab, and slowFactor exactly with mode: slow', () => {
  const noLlm = specIssues(withTriggers('    - { kind: provider-outage, duration: 5s }'));
  assert.ok(
    noLlm.some((i) => i.path === 'schedule.triggers.0.target' && /needs an llm provider/.test(i.message)),
    JSON.stringify(noLlm),
  );
  const llmPlatform = readFileSync(
    new URL('../../../experiments/llm-platform.yaml', import.meta.url),
    'utf8',
  );
  const slowWithout = specIssues(
    withTriggers('    - { kind: provider-outage, mode: slow, duration: 5s }', llmPlatform),
  );
  assert.ok(
    slowWithout.some(
      (i) => i.path === 'schedule.triggers.0.slowFactor' && /needs slowFactor/.test(i.message),
    ),
    JSON.stringify(slowWithout),
  );
  const factorWithoutSlow = specIssues(
    withTriggers('    - { kind: provider-outage, mode: reset, slowFactor: 5, duration: 5s }', llmPlatform),
  );
  assert.ok(
    factorWithoutSlow.some((i) => i.path === 'schedule.triggers.0.slowFactor'),
    JSON.stringify(factorWithoutSlow),
  );
  const e = parseExperiment(
    withTriggers('    - { kind: provider-outage, duration: 20s }', llmPlatform),
    'x.yaml',
  );
  const t = e.schedule.triggers[0]!;
  assert.equal(t.kind, 'provider-outage');
  assert.equal(describeTriggers(e.schedule.triggers), 'LLM provider down (503 to every call) for 20 s');
  const trigger = createTrigger(t);
  assert.equal(trigger.target, 'llm');
  assert.match(trigger.describe(), /take the LLM provider down \(every call answered 503\)/);
});

test('slowdown and workers: capacity degradation with a magnitude, refused where it can never work, by line and field', () => {
  const e = parseExperiment(
    withTriggers(
      '    - { kind: slowdown, factor: 3x, duration: 10s }\n    - { kind: workers, to: 2, duration: 10s }',
    ),
    'x.yaml',
  );
  assert.equal(
    describeTriggers(e.schedule.triggers),
    "slow api's work down 3x for 10 s (from +0 s); shrink api's pool to 2 workers for 10 s (from +10 s)",
  );
  assert.deepEqual(
    e.schedule.triggers.map((t) => createTrigger(t).target),
    ['api', 'api'],
  );
  const where = (text: string) => specIssues(withTriggers(text)).map((i) => [i.path, i.line, i.message]);
  // A pool no smaller than the api's declared 8 workers is no loss of capacity.
  const noLoss = where('    - { kind: workers, to: 8, duration: 10s }');
  assert.equal(noLoss[0]![0], 'schedule.triggers.0.to');
  assert.equal(noLoss[0]![1], 25);
  assert.match(String(noLoss[0]![2]), /below lab.api.workers \(8\)/);
  assert.match(String(where('    - { kind: slowdown, factor: 1x, duration: 10s }')[0]![2]), /above 1x/);
  assert.match(
    String(where('    - { kind: slowdown, target: redis, factor: 2x, duration: 10s }')[0]![2]),
    /acts on the api/,
  );
  // A reference server has no run-time switch.
  const phpFpm = readFileSync(
    new URL('../../../experiments/php-fpm-retry-storm.yaml', import.meta.url),
    'utf8',
  );
  const onServer = specIssues(withTriggers('    - { kind: slowdown, factor: 3x, duration: 10s }', phpFpm));
  assert.ok(
    onServer.some(
      (i) =>
        i.path === 'schedule.triggers.0.kind' && /php-fpm reference server does not have/.test(i.message),
    ),
    JSON.stringify(onServer),
  );
});
