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
    load: {
      model: 'open',
      description: 'open loop, poisson arrivals at 70% of capacity',
      peakPerS: 280,
      connections: 1136,
    },
    clientWait: { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null },
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
