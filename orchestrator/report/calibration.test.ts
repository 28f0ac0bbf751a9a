import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stepTable, type CalibrationResult } from '../calibrate/runCalibration.js';
import { tempDir } from '../../test/helpers/cli.js';
import { manifest } from '../../test/helpers/reportData.js';
import { isCalibrationDir, loadCalibration, calibrationFigures, calibrationSections } from './calibration.js';

const step = (
  index: number,
  kind: 'ladder' | 'refine' | 'overload',
  rate: number,
  goodput: number,
  p99: number,
  sustained: boolean | null,
): CalibrationResult['steps'][number] => ({
  index,
  kind,
  ratePerS: rate,
  startS: index * 4,
  endS: index * 4 + 3,
  measureFromS: index * 4 + 1,
  seconds: 2,
  offered: rate * 2,
  offeredPerS: rate,
  goodputPerS: goodput,
  goodputRatio: Math.round((goodput / rate) * 1000) / 1000,
  latencyMs: { samples: goodput * 2, mean: p99 / 2, p50: p99 / 2, p90: p99, p99, p999: p99, max: p99 },
  failures: goodput < rate ? { timeout: (rate - goodput) * 2 } : {},
  lateSends: 0,
  backlogAtStart: 0,
  sustained,
  why: sustained === false ? ['goodput too low'] : [],
});

const result: CalibrationResult = {
  experiment: 'small',
  experimentFile: 'small.yaml',
  runtime: 'local',
  startedAt: '2026-12-01T10:00:00.000Z',
  scale: 1,
  seed: 1,
  usable: true,
  warnings: [],
  load: { arrival: 'poisson', description: 'open loop, poisson arrivals at a flat rate per step' },
  client: 'per-attempt timeout 500ms, retry none, deadline none',
  plan: { stepS: 3, settleS: 1, refine: 0, ladderPerS: [100, 200, 300] },
  rule: { tolerance: 0.05, latencyFactor: 10, definition: 'the rule' },
  nominalCapacityPerS: 200,
  referenceP99Ms: 30,
  status: 'saturated',
  reason: 'sustained up to 200/s',
  saturation: { offeredPerS: 200, measuredOfferedPerS: 200, goodputPerS: 198, p99Ms: 80 },
  bound: null,
  peakGoodput: { offeredPerS: 200, goodputPerS: 198 },
  margin: { productionPeakPerS: 80, ratio: 2.5, note: 'saturation 200/s / production peak 80/s = 2.5x' },
  overload: {
    offeredPerS: 300,
    goodputPerS: 50,
    ofSaturationGoodput: 0.253,
    ofOffered: 0.167,
    p99Ms: 490,
    failures: { timeout: 500 },
  },
  overloadNote: null,
  anomaliesPerS: [],
  steps: [
    step(1, 'ladder', 100, 100, 30, true),
    step(2, 'ladder', 200, 198, 80, true),
    step(3, 'ladder', 300, 60, 495, false),
    step(4, 'overload', 300, 50, 490, null),
  ],
  stored: { file: '/state/calibrations/m/l.json' },
};

test('a calibration folder is recognised and reported from its files: result, margin, 150%, steps, figures', () => {
  const dir = tempDir('calibration-report');
  writeFileSync(join(dir, 'calibration.json'), JSON.stringify(result));
  writeFileSync(join(dir, 'steps.json'), JSON.stringify(stepTable(result)));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
  writeFileSync(
    join(dir, 'timeseries.csv'),
    't_s,phase,offered,goodput\n0,drain,0,0\n1,step-1-settle,100,99\n2,step-1,100,100\n',
  );
  assert.ok(isCalibrationDir(dir));
  const c = loadCalibration(dir);
  assert.deepEqual(c.steps.saturation, { offeredPerS: 200, goodputPerS: 198 });
  // steps.json lists every step by rate, the overload probe included.
  assert.deepEqual(
    c.steps.steps.map((s) => s.offeredPerS),
    [100, 200, 300, 300],
  );
  const figs = calibrationFigures(c);
  assert.deepEqual(
    figs.map((f) => f.id),
    ['steps-goodput', 'steps-latency', 'steps-throughput'],
  );
  const sections = calibrationSections(c, figs);
  assert.deepEqual(
    sections.map((s) => s.id),
    ['header', 'what-ran', 'result', 'steps'],
  );
  const body = sections.map((s) => s.body).join('\n');
  assert.match(body, /\*\*Saturation point: 200 req\/s\*\*/);
  assert.match(body, /\*\*2\.5x\*\* \(saturation 200\/s \/ production peak 80\/s/);
  assert.match(body, /\*\*50 req\/s\*\*, 25\.3% of the goodput at saturation \(16\.7% of what was offered\)/);
  assert.match(
    body,
    /\| 3 \| ladder \| 300\/s \| 300 \| 60 \| 20% \|.*\*\*not sustained\*\*: goodput too low \|/,
  );
  assert.match(body, /\| 4 \| overload \| 300\/s \|.*not judged \(150% probe\) \|/);
  assert.match(body, /Stored.*\/state\/calibrations\/m\/l\.json/);
  // A run folder is not a calibration folder.
  const run = tempDir('not-calibration');
  mkdirSync(join(run, 'run-1'));
  writeFileSync(join(run, 'calibration.json'), '{}');
  assert.equal(isCalibrationDir(run), false);
  assert.ok(readFileSync(join(dir, 'steps.json'), 'utf8').includes('"saturation"'));
});
