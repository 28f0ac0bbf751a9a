import { readFileSync } from 'node:fs';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import {
  parseTimeseries,
  type Manifest,
  type ResultsData,
  type RunData,
} from '../../orchestrator/report/load.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';

/** Synthetic report inputs for unit tests of the report (plain data, no lab). */
export const experiment = parseExperiment(
  readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8'),
  'retry-storm.yaml',
);

export const manifest: Manifest = {
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
  seed: 42,
  experiment,
};

const noLatency = { samples: 0, mean: null, p50: null, p90: null, p99: null, max: null };

export function summary(over: Partial<RunSummary> = {}): RunSummary {
  return {
    experiment: 'retry-storm',
    runtime: 'local',
    run: 1,
    seed: 42,
    scale: 0.2,
    usable: true,
    warnings: [],
    validity: {
      valid: true,
      limits: {
        triggerOnTimeMs: 100,
        rateTolerance: 0.02,
        lagP99Ms: 10,
        lagP99Why: 'test',
        generatorCpu: 0.9,
      },
      checks: [
        {
          check: 'recorded',
          what: 'every origin offered has exactly one outcome',
          value: '100000 recorded of 100000 offered',
          limit: 'recorded = offered',
          ok: true,
        },
        { check: 'lag', what: 'schedule lag p99 of first attempts, ms', value: 0.9, limit: 10, ok: true },
      ],
      failed: [],
    },
    outcome: 'metastable',
    outcomeReason:
      'not recovered by the end of the observation (36 s after the trigger), and self-sustaining: over the last 12 s goodput shows no upward trend (slope 0/s per s); the client sends 1,150 attempts/s against a capacity of 400/s (amplification 4.05)',
    sustainingEffect: 'the client sends 1,150 attempts/s against a capacity of 400/s (amplification 4.05)',
    projectedRecoveryS: null,
    trend: {
      fromS: 44,
      toS: 56,
      goodputSlope: 0,
      goodputRising: false,
      backlogSlope: null,
      backlogShrinking: null,
    },
    offered: 100_000,
    recorded: 100_000,
    attempts: 300_000,
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
      unsent: 0,
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
    trigger: { kind: 'pause', target: 'api', startS: 4, endS: 6 },
    triggers: [{ kind: 'pause', target: 'api', startS: 4, endS: 6 }],
    afterTrigger: {
      seconds: 36,
      offeredPerS: 284,
      goodputPerS: 0,
      amplification: 4.05,
      amplificationServer: null,
      latencyMs: noLatency,
    },
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
    ...over,
  };
}

/** A timeseries.csv of `seconds` rows with the given extra columns (name → value per second, '' for empty). */
export function csv(seconds: number, extra: Record<string, (i: number) => number | string> = {}): string {
  const cols = [
    't_s',
    'phase',
    'offered',
    'attempts',
    'goodput',
    'amplification_client',
    'amplification_server',
    'failed_timeout',
    'response_p50_ms',
    'response_p99_ms',
    'response_max_ms',
    'server_queue_depth',
    'server_busy_workers',
    'server_cpu_seconds',
    'server_rss_bytes',
    ...Object.keys(extra),
  ];
  const rows = [cols.join(',')];
  for (let i = 0; i < seconds; i++) {
    const paused = i >= 4 && i < 6;
    rows.push(
      [
        i,
        i < 4 ? 'baseline' : paused ? 'trigger' : 'observe',
        280,
        i < 4 ? 280 : 1100,
        i < 4 ? 279 : 0,
        i < 4 ? 1 : 3.9,
        paused ? '' : i < 4 ? 1 : 3.2,
        i < 4 ? 0 : 270,
        i < 4 ? 20 : '',
        i < 4 ? 100 : '',
        i < 4 ? 150 : '',
        paused ? '' : i * 100,
        paused ? '' : 8,
        paused ? '' : 0.4,
        paused ? '' : 7e7,
        ...Object.values(extra).map((f) => f(i)),
      ].join(','),
    );
  }
  return rows.join('\n') + '\n';
}

export function runData(index = 1, text = csv(12), over: Partial<RunSummary> = {}): RunData {
  return { index, manifest, summary: summary({ run: index, ...over }), series: parseTimeseries(text) };
}

export function results(runs: RunData[], over: Partial<ResultsData> = {}): ResultsData {
  return { experiment, runs, aggregate: null, sweep: null, steps: null, ...over };
}
