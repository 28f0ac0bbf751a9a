import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CalibrationResult } from '../../calibrate/result.js';
import { calibrationTables, readCalibrationFolder } from './calibration.js';

// The calibration tables without a lab: a step test that never saturated states its bound,
// not a capacity; a folder missing a file is a clear error naming it.

function step(index: number, ratePerS: number, sustained: boolean) {
  return {
    index,
    kind: 'ladder',
    ratePerS,
    offeredPerS: ratePerS * 0.9991,
    goodputPerS: ratePerS * 0.98765,
    goodputRatio: 0.98765,
    latencyMs: { samples: 2 * Math.round(ratePerS), p50: 12.3456, p99: 45.678 },
    backlogAtStart: 0,
    sustained,
  };
}

const notReached = {
  experiment: 'x_y',
  status: 'not-reached',
  reason: 'the highest step (300/s) was sustained: capacity >= 300/s',
  rule: { tolerance: 0.05, latencyFactor: 10 },
  referenceP99Ms: 45.678,
  nominalCapacityPerS: 400,
  saturation: null,
  bound: { atLeastPerS: 300 },
  peakGoodput: { offeredPerS: 300, goodputPerS: 296.295 },
  margin: { productionPeakPerS: null, ratio: null, note: '' },
  overload: null,
  steps: [step(1, 100, true), step(2, 233.333, true), step(3, 300, true)],
} as unknown as CalibrationResult;

test('a step test that did not saturate: its bound, no capacity; every step with its declared rate exactly', () => {
  const [steps, capacity] = calibrationTables('x_y: step test', notReached);
  assert.equal(steps!.id, 'steps');
  assert.ok(steps!.tex.includes('\\label{tab:steps}') && capacity!.tex.includes('\\label{tab:capacity}'));
  assert.ok(steps!.tex.includes('x\\_y'), 'the name is escaped');
  assert.match(
    steps!.tex,
    /^2 & ladder & \\num\{233\.333\} & \\num\{233\} & \\num\{230\} & \\num\{0\.988\} & \\num\{12\.3\} & \\num\{45\.7\} & \\num\{466\} & yes \\\\$/m,
  );
  assert.match(capacity!.tex, /^Status & not-reached \\\\$/m);
  assert.match(capacity!.tex, /^Capacity at least & \\SI\{300\}\{\\per\\second\} \\\\$/m);
  assert.doesNotMatch(capacity!.tex, /saturation point\) &|Production peak|Overload/);
});

test('a calibration folder without calibration.json, or a run folder, is an error naming the file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'latex-cal-'));
  writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ kind: 'run' }));
  assert.throws(() => readCalibrationFolder(dir), /manifest\.json: kind: not "calibration"/);
  writeFileSync(
    join(dir, 'manifest.json'),
    JSON.stringify({
      kind: 'calibration',
      metabench: '0',
      runtime: 'local',
      seed: 1,
      scale: 1,
      calibration: {},
      experiment: {},
    }),
  );
  assert.throws(() => readCalibrationFolder(dir), /calibration\.json: missing/);
  writeFileSync(join(dir, 'calibration.json'), JSON.stringify({ ...notReached, steps: undefined }));
  assert.throws(() => readCalibrationFolder(dir), /calibration\.json: steps: missing/);
});
