import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseExperiment } from '../spec/load.js';
import type { RunSummary, WindowSummary } from '../analysis/summary.js';
import { renderMarkdown } from './markdown.js';

const experiment = parseExperiment(
  readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8'),
  'retry-storm.yaml',
);
const noLatency = { samples: 0, mean: null, p50: null, p90: null, p99: null, max: null };

function run(after: WindowSummary): RunSummary {
  return {
    experiment: 'retry-storm',
    runtime: 'local',
    run: 1,
    seed: 42,
    scale: 0.2,
    usable: true,
    warnings: ['5 late sends (0.2% of origins …)'],
    offered: 100,
    recorded: 100,
    attempts: 300,
    lateSends: 5,
    omissionFactor: 1.01,
    scheduleLagMs: { samples: 100, mean: 0.1, p50: 0.05, p90: 0.2, p99: 0.9, p999: 1.2, max: 1.3 },
    outcomes: {
      ok: 60,
      timeout: 40,
      'conn-refused': 0,
      'conn-reset': 0,
      'conn-error': 0,
      'http-4xx': 0,
      'http-5xx': 0,
      shed: 0,
      'deadline-exceeded': 0,
      'abandoned-at-end': 0,
      abandoned: 0,
      'breaker-open': 0,
      throttled: 0,
      cancelled: 0,
    },
    capacity: { nominalPerS: 400, measuredPerS: null },
    offeredPerS: 280,
    baseline: {
      seconds: 12,
      offeredPerS: 278,
      goodputPerS: 277.5,
      amplification: 1,
      amplificationServer: 1,
      latencyMs: { samples: 3335, mean: 24, p50: 18.2, p90: 52.2, p99: 103.4, max: 167 },
    },
    trigger: { kind: 'pause', target: 'api', startS: 18, endS: 20 },
    afterTrigger: after,
    recovered: false,
    recoveryTimeS: null,
    recoveryDeadlineS: 10,
    metastable: true,
    recoveryReason: 'not recovered within the observed 36 s after the trigger (deadline 10 s)',
    observedAfterS: 36,
    hypothesis: [
      {
        metric: 'goodput',
        window: 'baseline',
        threshold: '>= 95% offered',
        value: 0.998,
        samples: 3336,
        verdict: 'pass',
      },
      {
        metric: 'p99',
        window: 'baseline',
        threshold: '<= 400ms',
        value: null,
        samples: 0,
        verdict: 'unmeasured',
      },
    ],
    policies: {
      clients: 1,
      retries: 200,
      retriesDeniedByBudget: null,
      retriesCutByDeadline: 0,
      retriesExhausted: 40,
      breakerOpens: null,
      breakerRejected: null,
      breakerOpenS: null,
      throttled: null,
      hedgesSent: null,
      hedgesWon: null,
      hedgesDenied: null,
      cancelledAttempts: 0,
      abandoned: null,
    },
  };
}

const manifest = {
  startedAt: '2026-11-29T16:00:00.000Z',
  gitRevision: 'abc123',
  machine: {
    cpuModel: 'Test CPU',
    cpus: 2,
    memoryBytes: 24 * 2 ** 30,
    os: 'Linux 6 (linux/x64)',
    node: 'v20.20.2',
  },
  runtime: 'local',
  topology: { components: [{ name: 'api', config: { workers: 8 } }] },
  scale: 0.2,
};

test('report.md puts the sample count beside every percentile and says unmeasured for an empty window', () => {
  const md = renderMarkdown({
    experiment,
    manifest,
    runs: [
      run({
        seconds: 36,
        offeredPerS: 284,
        goodputPerS: 0,
        amplification: 4.05,
        amplificationServer: null,
        latencyMs: noLatency,
      }),
    ],
    aggregate: null,
  });
  assert.match(
    md,
    /\| 18\.2 ms \(n=3335\) \| 52\.2 ms \(n=3335\) \| 103\.4 ms \(n=3335\) \| 167 ms \(n=3335\) \|/,
  );
  assert.match(md, /unmeasured \(n=0\) \| unmeasured \(n=0\) \| unmeasured \(n=0\) \| unmeasured \(n=0\)/);
  assert.match(md, /\| 4\.05 \| unmeasured \|/); // server-side amplification not scraped
  // Verdicts come last, with the unmeasured hypothesis as such.
  const verdicts = md.indexOf('## Verdicts');
  assert.ok(verdicts > md.indexOf('## After the trigger'));
  assert.match(md.slice(verdicts), /\| p99 \| baseline \| `<= 400ms` \| – \| 0 \| \*\*unmeasured\*\* \|/);
  assert.match(md.slice(verdicts), /\*\*metastable\*\*: not recovered within the observed 36 s/);
  assert.match(md, /Test CPU, 2 cores/);
  assert.match(md, /5 late sends/);
});

test('report.md shows the counters of the client policies the client used, and only those', () => {
  const after: WindowSummary = {
    seconds: 36,
    offeredPerS: 284,
    goodputPerS: 280,
    amplification: 1.08,
    amplificationServer: 1.1,
    latencyMs: noLatency,
  };
  const base = run(after);
  const withPolicies: RunSummary = {
    ...base,
    policies: {
      ...base.policies,
      retriesDeniedByBudget: 1234,
      breakerOpens: 3,
      breakerRejected: 800,
      breakerOpenS: 4.5,
      hedgesSent: 0,
      hedgesWon: 0,
      hedgesDenied: 0,
      cancelledAttempts: 17,
      abandoned: 9,
    },
  };
  const md = renderMarkdown({ experiment, manifest, runs: [withPolicies], aggregate: null });
  const section = md.slice(md.indexOf('## Client policies'), md.indexOf('## Measurement quality'));
  assert.ok(md.indexOf('## Client policies') > 0, md);
  assert.match(section, /\| retries denied by the budget \| 1234 \|/);
  assert.match(section, /\| breaker opens \| 3 \|/);
  assert.match(section, /\| cancelled attempts \| 17 \|/);
  assert.match(section, /\| abandoned origins \| 9 \|/);
  assert.doesNotMatch(section, /hedges sent/); // a policy that did nothing is not a row
  assert.doesNotMatch(section, /throttling/); // nor one the client did not use
  // The client line describes the whole model.
  assert.match(
    md,
    /\*\*Client\*\*: per-attempt timeout 500ms, retry immediate up to 4 attempts, deadline none\./,
  );
});
