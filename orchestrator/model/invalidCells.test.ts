import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import type { RunSummary } from '../analysis/summary.js';
import { SweepTableSchema, type SweepTable } from '../report/tables.js';
import { loadExperimentFile } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { REPO } from '../../test/helpers/cli.js';
import { invalidCells, invalidReason, MAP_FACTORS } from './map.js';
import { predict } from './predict.js';
import { writeModel } from './report.js';

// Issue 33: the map marked cells "I" (invalid) with no reason anywhere. Each invalid cell
// now carries the validity checks its run failed, in model.md, model.json and map.csv.

const failed = {
  outcome: 'invalid',
  validity: {
    valid: false,
    failed: [{ check: 'lag', what: 'schedule lag p99 within its limit', value: 35.2, limit: 10 }],
  },
} as unknown as RunSummary;

test('an invalid cell records the checks its run failed; a valid one records nothing', () => {
  assert.deepEqual(invalidReason(failed), {
    invalidBecause: { lag: 1 },
    outcomes: 'invalid: schedule lag p99 within its limit: 35.2 (limit 10)',
  });
  assert.deepEqual(invalidReason({ outcome: 'metastable' } as RunSummary), {});
});

test('model.md lists each invalid cell with its reason, and model.json and map.csv carry it', async () => {
  const row = (load: number, verdict: SweepTable['rows'][number]['verdict'], extra = {}) => ({
    factors: { [MAP_FACTORS[0].name]: load, [MAP_FACTORS[1].name]: 5 },
    figures: { 'goodput after': null },
    verdict,
    ...extra,
  });
  const map: SweepTable = SweepTableSchema.parse({
    design: 'grid',
    factors: MAP_FACTORS.map((f) => ({ ...f })),
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    rows: [row(60, 'recovered'), row(280, 'invalid', invalidReason(failed))],
  });
  assert.deepEqual(invalidCells(map), [
    '- offered load 280 origins/s, trigger duration 5 s: invalid: schedule lag p99 within its limit: 35.2 (limit 10)',
  ]);
  const experiment = loadExperimentFile(join(REPO, 'experiments/retry-storm.yaml'));
  const dir = mkdtempSync(join(tmpdir(), 'metabench-model-invalid-'));
  await writeModel(dir, {
    experiment,
    file: 'experiments/retry-storm.yaml',
    overrides: [],
    scale: 1,
    prediction: predict(planRun(experiment, { scale: 1, run: 1 })),
    map,
    mapWallS: null,
  });
  const md = readFileSync(join(dir, 'model.md'), 'utf8');
  assert.match(md, /I invalid \(the simulated run failed a validity check/);
  assert.match(md, /- offered load 280 origins\/s, trigger duration 5 s: invalid: schedule lag p99/);
  const json = JSON.parse(readFileSync(join(dir, 'model.json'), 'utf8')) as SweepTable & { map: SweepTable };
  assert.deepEqual(json.map.rows[1]!.invalidBecause, { lag: 1 });
  const csv = parse(readFileSync(join(dir, 'map.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(csv[0]!['invalid because'], '');
  assert.match(csv[1]!['invalid because']!, /schedule lag p99 within its limit: 35\.2 \(limit 10\)/);
});
