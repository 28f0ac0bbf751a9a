import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { SweepTable, SweepVerdict } from './tables.js';
import { sweepBoundaries, sweepLead } from './sweepLead.js';

/** A one-factor sweep of load.rate, one row per (level, verdict), listed out of order on purpose. */
function rateSweep(points: readonly [number, SweepVerdict][]): SweepTable {
  return {
    design: 'one-at-a-time',
    factors: [{ name: 'load.rate', unit: '% capacity' }],
    figures: [{ name: 'amplification', unit: '' }],
    rows: [...points].reverse().map(([rate, verdict]) => ({
      factors: { 'load.rate': rate },
      figures: { amplification: verdict === 'invalid' ? null : 1 },
      verdict,
      runs: 1,
      validRuns: verdict === 'invalid' ? 0 : 1,
      invalidRuns: verdict === 'invalid' ? 1 : 0,
    })),
  };
}

test("a sweep's report opens with its own result: the counts, the boundary between points of different outcome, each point's outcome in level order", () => {
  const lead = sweepLead(
    rateSweep([
      [50, 'recovered'],
      [60, 'recovered'],
      [70, 'metastable'],
      [80, 'metastable'],
    ]),
  );
  assert.deepEqual(lead, [
    '**Sweep of 4 points: metastable 2, recovered 2.**',
    '',
    'Boundary found (where the verdict changes between neighbouring levels):',
    '',
    '- load.rate: recovered at 60, metastable from 70',
    '',
    '- load.rate = 50: **recovered**',
    '- load.rate = 60: **recovered**',
    '- load.rate = 70: **metastable**',
    '- load.rate = 80: **metastable**',
    '',
  ]);
});

test('a sweep whose first point differs from the others: the lead is the sweep’s result, not its first point’s', () => {
  const lead = sweepLead(
    rateSweep([
      [50, 'recovered'],
      [60, 'metastable'],
      [70, 'metastable'],
      [80, 'metastable'],
    ]),
  );
  assert.equal(lead[0], '**Sweep of 4 points: metastable 3, recovered 1.**');
  assert.ok(lead.includes('- load.rate: recovered at 50, metastable from 60'), lead.join('\n'));
  assert.deepEqual(
    lead.filter((l) => l.startsWith('- load.rate =')),
    [
      '- load.rate = 50: **recovered**',
      '- load.rate = 60: **metastable**',
      '- load.rate = 70: **metastable**',
      '- load.rate = 80: **metastable**',
    ],
  );
  assert.ok(!lead.some((l) => /invalid/.test(l)), 'nothing is called invalid');
});

test('an invalid point: marked, skipped by the boundary (named in between), and the re-run of the invalid runs alone is offered', () => {
  const t = rateSweep([
    [50, 'recovered'],
    [60, 'invalid'],
    [70, 'metastable'],
  ]);
  assert.deepEqual(sweepBoundaries(t), [
    {
      factor: 'load.rate',
      at: {},
      below: { level: 50, verdict: 'recovered' },
      above: { level: 70, verdict: 'metastable' },
      between: [60],
    },
  ]);
  const lead = sweepLead(t);
  assert.equal(lead[0], '**Sweep of 3 points: metastable 1, recovered 1, invalid 1.**');
  assert.ok(
    lead.includes('- load.rate: recovered at 50, metastable from 70 (no verdict in between, at 60)'),
    lead.join('\n'),
  );
  assert.ok(lead.includes('- load.rate = 60: **invalid**'));
  const note = lead.find((l) => l.startsWith('1 point is invalid'));
  assert.ok(note, lead.join('\n'));
  assert.match(note, /no valid run, so no verdict.*: load\.rate = 60\./);
  assert.match(note, /`metabench sweep FILE --resume DIR --rerun-invalid` re-runs only the invalid runs/);
});

test('no boundary: every judged point has one verdict, and the lead says to widen the range', () => {
  const lead = sweepLead(
    rateSweep([
      [50, 'metastable'],
      [60, 'metastable'],
    ]),
  );
  assert.ok(
    lead.includes(
      "No boundary found: every point with a verdict is metastable; widen the factors' ranges to find where it changes.",
    ),
    lead.join('\n'),
  );
  assert.ok(!lead.some((l) => l.startsWith('Boundar')));
});

test('a grid: the boundary along one factor is found at each level of the other', () => {
  const row = (rate: number, timeout: string, verdict: SweepVerdict): SweepTable['rows'][number] => ({
    factors: { 'load.rate': rate, 'client.timeout': timeout },
    figures: { amplification: 1 },
    verdict,
  });
  const t: SweepTable = {
    design: 'grid',
    factors: [
      { name: 'load.rate', unit: '% capacity' },
      { name: 'client.timeout', unit: '' },
    ],
    figures: [{ name: 'amplification', unit: '' }],
    rows: [
      row(50, '200ms', 'recovered'),
      row(70, '200ms', 'metastable'),
      row(50, '1s', 'recovered'),
      row(70, '1s', 'recovered'),
    ],
  };
  const lead = sweepLead(t);
  assert.ok(
    lead.includes('- load.rate at client.timeout = 200ms: recovered at 50, metastable from 70'),
    lead.join('\n'),
  );
  assert.ok(
    lead.includes('- client.timeout at load.rate = 70: metastable at 200ms, recovered from 1s'),
    lead.join('\n'),
  );
  assert.equal(sweepBoundaries(t).length, 2);
});
