import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import type { RunSummary } from '../analysis/summary.js';
import { isSweepTable } from '../report/tables.js';
import { planPoints, type Factor } from '../spec/sweepPlan.js';
import { loadExperimentFile } from '../spec/load.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import { ctmcBeside } from '../analysis/markov/experiment.js';
import { hypothesisVerdicts, pointVerdict, sweepCsv, sweepMarkdown, sweepTable } from './table.js';

function run(
  metastable: boolean | null,
  goodputAfter: number,
  verdict: 'pass' | 'fail' | 'unmeasured',
): RunSummary {
  const lat = { samples: 10, mean: 1, p50: 1, p90: 2, p99: 3, max: 4 };
  return {
    metastable,
    recoveryTimeS: metastable === false ? 5 : null,
    baseline: { goodputPerS: 100, afterTrigger: null, amplification: 1, latencyMs: lat },
    afterTrigger: { goodputPerS: goodputAfter, amplification: 3, latencyMs: lat },
    hypothesis: [
      { metric: 'goodput', window: 'baseline', threshold: '>= 95% offered', value: 1, samples: 10, verdict },
    ],
  } as unknown as RunSummary;
}

test('a point is metastable when most of its measured runs are; unmeasured when none measured', () => {
  assert.equal(
    pointVerdict([run(true, 1, 'pass'), run(true, 1, 'pass'), run(false, 1, 'pass')]),
    'metastable',
  );
  assert.equal(
    pointVerdict([run(false, 1, 'pass'), run(false, 1, 'pass'), run(true, 1, 'pass')]),
    'recovered',
  );
  assert.equal(pointVerdict([run(true, 1, 'pass'), run(false, 1, 'pass')]), 'metastable');
  assert.equal(pointVerdict([run(null, 1, 'pass'), run(false, 1, 'pass')]), 'recovered');
  assert.equal(pointVerdict([run(null, 1, 'pass')]), 'unmeasured');
  assert.deepEqual(hypothesisVerdicts([run(true, 1, 'pass'), run(true, 1, 'fail'), run(true, 1, 'pass')]), {
    'goodput baseline': 'pass 2/3, fail 1/3',
  });
});

test('the sweep table: report shape, means over runs, CSV and markdown rows per point', () => {
  const f: Factor = {
    path: 'load.rate',
    values: ['50% capacity', '90% capacity'],
    reference: '70% capacity',
  };
  const points = planPoints('one-at-a-time', [f]);
  const results = [
    { point: points[0]!, dir: 'point-1', runs: [run(true, 10, 'pass'), run(true, 20, 'fail')] },
    { point: points[1]!, dir: 'point-2', runs: [run(false, 95, 'pass'), run(false, 97, 'pass')] },
  ];
  const t = sweepTable('one-at-a-time', [f], results);
  assert.ok(isSweepTable(t));
  assert.deepEqual(t.factors, [{ name: 'load.rate', unit: 'as written', reference: '70% capacity' }]);
  assert.deepEqual(
    t.rows.map((r) => [
      r.varied,
      r.factors['load.rate'],
      r.verdict,
      r.figures['goodput after'],
      r.metastableRuns,
    ]),
    [
      [undefined, '70% capacity', 'metastable', 15, 2],
      ['load.rate', '50% capacity', 'recovered', 96, 0],
    ],
  );
  const csv = parse(sweepCsv([f], results), { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    csv.map((r) => [
      r['point'],
      r['load.rate'],
      r['verdict'],
      r['metastable'],
      r['hypothesis goodput baseline'],
    ]),
    [
      ['1', '70% capacity', 'metastable', '2/2', 'pass 1/2, fail 1/2'],
      ['2', '50% capacity', 'recovered', '0/2', 'pass 2/2'],
    ],
  );
  const md = sweepMarkdown('s', 'one-at-a-time', [f], results);
  assert.match(md, /\| 2 \| load\.rate \| 50% capacity \| 2 \| recovered \| 0\/2 \|/);
});

test('a sweep with simulated twins puts the simulation’s verdict and goodput beside the lab’s, point by point', () => {
  const f: Factor = { path: 'load.rate', values: ['50% capacity'], reference: '70% capacity' };
  const points = planPoints('one-at-a-time', [f]);
  const results = [
    // The lab collapsed at the reference point; the model says it recovers: they differ.
    { point: points[0]!, dir: 'point-1', runs: [run(true, 5, 'pass')], twin: [run(false, 99, 'pass')] },
    { point: points[1]!, dir: 'point-2', runs: [run(false, 95, 'pass')], twin: [run(false, 97, 'pass')] },
  ];
  const csv = parse(sweepCsv([f], results), { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    csv.map((r) => [r['verdict'], r['verdict (simulated)'], r['goodput after, simulated (req/s)']]),
    [
      ['metastable', 'recovered', '99'],
      ['recovered', 'recovered', '97'],
    ],
  );
  assert.match(
    sweepMarkdown('s', 'one-at-a-time', [f], results),
    /\| verdict \| metastable \| verdict \(simulated\) \|/,
  );
  // Without twins, no such columns.
  const plain = parse(
    sweepCsv(
      [f],
      results.map(({ twin: _t, ...r }) => r),
    ),
    { columns: true },
  ) as Record<string, string>[];
  assert.ok(!('verdict (simulated)' in plain[0]!));
});

test('a sweep with simulated twins puts the recovery times side by side: measured, simulated and the Markov model’s', () => {
  const f: Factor = { path: 'load.rate', values: ['50% capacity'], reference: '70% capacity' };
  const points = planPoints('one-at-a-time', [f]);
  // retry-storm made Metafor's README system (one worker at 10/s, 3 s timeout, 5 attempts), its
  // bounds: at 2/s the chain drains a full server in 13 s; at 6/s it stays collapsed for hours.
  const e = loadExperimentFile(
    'experiments/retry-storm.yaml',
    ['lab.api.workers=1', 'lab.api.work.mean=100ms', 'client.timeout=3s', 'client.retry.maxAttempts=5'].map(
      (x) => (parseSet(x) as { ok: true; value: Override }).value,
    ),
  );
  const knobs = { queueBound: 100, orbitBound: 20 };
  const atLow = ctmcBeside(e, 2, 60, knobs);
  const atHigh = ctmcBeside(e, 6, 60, knobs);
  const results = [
    {
      point: points[0]!,
      dir: 'point-1',
      runs: [run(true, 5, 'pass')],
      twin: [run(true, 9, 'pass')],
      ctmc: atHigh,
    },
    {
      point: points[1]!,
      dir: 'point-2',
      runs: [run(false, 95, 'pass')],
      twin: [run(false, 97, 'pass')],
      ctmc: atLow,
    },
  ];
  const csv = parse(sweepCsv([f], results), { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    csv.map((r) => [
      r['recovery time (s)'],
      r['recovery time, simulated (s)'],
      r['recovery time, CTMC (s)'],
      r['P(recovered within deadline), CTMC'],
    ]),
    [
      ['', '', String(atHigh.recoveryS), String(atHigh.pRecoveredWithin)],
      ['5', '5', String(atLow.recoveryS), String(atLow.pRecoveredWithin)],
    ],
  );
  assert.ok(atLow.recoveryS! < 20 && atLow.pRecoveredWithin! > 0.9, JSON.stringify(atLow));
  assert.ok(atHigh.recoveryS! > 10_000 && atHigh.pRecoveredWithin! < 0.01, JSON.stringify(atHigh));
});

test('a sweep point counts its valid runs only: metastable 2/2, and 1 invalid with the check it failed', () => {
  const invalid = {
    ...run(false, 300, 'pass'),
    metastable: null,
    outcome: 'invalid',
    validity: {
      valid: false,
      failed: [{ check: 'cpu', what: "the generator's CPU", value: 0.97, limit: 0.9 }],
    },
  } as unknown as RunSummary;
  const f: Factor = { path: 'load.rate', values: [], reference: '70% capacity' };
  const points = planPoints('one-at-a-time', [f]);
  const results = [
    { point: points[0]!, dir: 'point-1', runs: [run(true, 2, 'pass'), run(true, 4, 'pass'), invalid] },
  ];
  assert.equal(pointVerdict(results[0]!.runs), 'metastable');
  const row = sweepTable('one-at-a-time', [f], results).rows[0]!;
  assert.equal(row.metastableRuns, 2);
  assert.equal(row.validRuns, 2);
  assert.equal(row.invalidRuns, 1);
  assert.deepEqual(row.invalidBecause, { cpu: 1 });
  assert.equal(row.outcomes, 'metastable 2/2; invalid 1 (generator CPU)');
  assert.equal(row.figures['goodput after'], 3); // the invalid run's 300/s left out
  const csv = parse(sweepCsv([f], results), { columns: true }) as Record<string, string>[];
  assert.deepEqual(
    [csv[0]!['metastable'], csv[0]!['outcomes'], csv[0]!['invalid'], csv[0]!['goodput after (req/s)']],
    ['2/2', 'metastable 2/2; invalid 1 (generator CPU)', '1 (generator CPU)', '3'],
  );
  assert.match(
    sweepMarkdown('s', 'one-at-a-time', [f], results),
    /\| metastable 2\/2; invalid 1 \(generator CPU\) \|/,
  );
  // A point whose every run is invalid gives no verdict.
  assert.equal(pointVerdict([invalid]), 'invalid');
});
