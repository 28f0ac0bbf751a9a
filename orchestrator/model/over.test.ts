import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SweepTable } from '../report/tables.js';
import { mapTable, triggerSeconds } from './map.js';
import {
  describeJoin,
  distinctValues,
  joinLab,
  labOverlay,
  overCell,
  type JoinedPoint,
  type LabPoint,
} from './over.js';

// A hand-made model map: loads 100, 200, 300 origins/s × triggers 1 and 2 s; metastable
// where load × trigger > 250.
const MAP: SweepTable = {
  design: 'grid',
  factors: [
    { name: 'offered load', unit: 'origins/s' },
    { name: 'trigger duration', unit: 's' },
  ],
  figures: [{ name: 'goodput after', unit: 'req/s' }],
  rows: [1, 2].flatMap((y) =>
    [100, 200, 300].map((x) => ({
      factors: { 'offered load': x, 'trigger duration': y },
      figures: { 'goodput after': x },
      verdict: x * y > 250 ? ('metastable' as const) : ('recovered' as const),
    })),
  ),
};

const lab = (p: Partial<LabPoint> & Pick<LabPoint, 'offeredPerS' | 'triggerS' | 'verdict'>): LabPoint => ({
  sweep: 'sw',
  point: 1,
  factors: {},
  ...p,
});

const LAB: LabPoint[] = [
  lab({ point: 1, offeredPerS: 100, triggerS: 1, verdict: 'recovered' }), // agrees
  lab({ point: 2, offeredPerS: 200, triggerS: 1, verdict: 'metastable' }), // model R: disagrees
  // 10 s at --scale 0.3 in floating point, and a rate resolved from % capacity: still the 300/s, 2 s cell.
  lab({ point: 3, offeredPerS: 300.0000000001, triggerS: (10_000 * 0.3) / 1000 - 1, verdict: 'metastable' }),
  lab({ point: 4, offeredPerS: 150, triggerS: 2, verdict: 'metastable' }), // no model cell
  lab({ point: 5, offeredPerS: 100, triggerS: 2, verdict: 'unmeasured' }), // not comparable
  lab({
    sweep: 'other',
    point: 1,
    offeredPerS: 300,
    triggerS: 2,
    verdict: 'recovered',
    runs: 3,
    metastableRuns: 1,
  }), // model M: disagrees, same cell as point 3
];

test('joinLab: each lab point meets the model cell at its load and trigger duration, and the agreements are counted', () => {
  const j = joinLab(MAP, LAB);
  assert.deepEqual(
    j.points.map((p) => [p.sweep, p.point, p.model, p.agree]),
    [
      ['sw', 1, 'recovered', true],
      ['sw', 2, 'recovered', false],
      ['sw', 3, 'metastable', true],
      ['sw', 4, null, null],
      ['sw', 5, 'recovered', null],
      ['other', 1, 'metastable', false],
    ],
  );
  assert.deepEqual(
    { agree: j.agree, disagree: j.disagree, noCell: j.noCell, unmeasured: j.unmeasured },
    { agree: 2, disagree: 2, noCell: 1, unmeasured: 1 },
  );
  assert.equal(
    describeJoin(j),
    'lab vs model: 6 lab points; 2 agree, 2 disagree (✗), 1 unmeasured on one side, 1 with no model cell at its load and duration',
  );
  assert.equal(
    describeJoin(joinLab(MAP, LAB.slice(0, 1))),
    'lab vs model: 1 lab point; 1 agrees, 0 disagree',
  );
});

test('the map table with the lab over it: model / lab in each cell with a lab point, ✗ where they disagree', () => {
  const j = joinLab(MAP, LAB);
  assert.deepEqual(mapTable(MAP, { lowerPerS: 120, upperPerS: 250 }, j), [
    '| trigger (s) \\ load (origins/s) | 100 (stable) | 150 | 200 | 300 (unstable) |',
    '|---|---|---|---|---|',
    '| 2 | R / ? | – / **M** | **M** | **M** / **M**, R 1/3 ✗ |',
    '| 1 | R / R |  | R / **M** ✗ | **M** |',
  ]);
  // Without a lab, the table is the model's alone (as before --over).
  assert.deepEqual(mapTable(MAP), [
    '| trigger (s) \\ load (origins/s) | 100 | 200 | 300 |',
    '|---|---|---|---|',
    '| 2 | R | **M** | **M** |',
    '| 1 | R | R | **M** |',
  ]);
});

test('overCell: the model alone, model / lab, – / lab', () => {
  const p = (verdict: JoinedPoint['verdict'], model: JoinedPoint['model'], agree: boolean | null) => ({
    ...lab({ offeredPerS: 1, triggerS: 1, verdict }),
    model,
    agree,
  });
  assert.equal(overCell('metastable', []), '**M**');
  assert.equal(overCell(null, []), '');
  assert.equal(overCell('recovered', [p('recovered', 'recovered', true)]), 'R / R');
  assert.equal(overCell('recovered', [p('metastable', 'recovered', false)]), 'R / **M** ✗');
  assert.equal(overCell(null, [p('recovered', null, null)]), '– / R');
});

test('the figure overlay puts each lab point on the model cell it matched, an off-grid one at its own coordinates', () => {
  const o = labOverlay(MAP, joinLab(MAP, LAB));
  assert.equal(o.name, 'lab');
  assert.deepEqual(
    o.points.map((p) => [p.x, p.y, p.verdict, p.agree]),
    [
      [100, 1, 'recovered', true],
      [200, 1, 'metastable', false],
      [300, 2, 'metastable', true],
      [150, 2, 'metastable', null],
      [100, 2, 'unmeasured', null],
      [300, 2, 'recovered', false],
    ],
  );
  assert.equal(o.points[5]!.source, 'other point-1 (metastable 1/3)');
});

test('coordinates: trigger seconds to the microsecond, distinct values to a millionth (the first given kept)', () => {
  assert.equal(triggerSeconds(10_000, 0.3), 3);
  assert.equal(triggerSeconds(2500, 0.2), 0.5);
  assert.deepEqual(distinctValues([300, 100, 300.0000000001, 99.9999999999, 200]), [100, 200, 300]);
});
