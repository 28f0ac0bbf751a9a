import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderSvg } from '../svg.js';
import type { SweepTable } from '../tables.js';
import { sweepFigures } from './sweep.js';

// Issue 33 point 4: a point with no valid run has no value, and vanished from the figures.
// It is drawn, marked: a dashed rule at its level labelled "invalid".

const rates: SweepTable = {
  name: 'rates',
  design: 'one-at-a-time',
  factors: [{ name: 'load.rate', unit: 'as written', reference: '70% capacity' }],
  figures: [{ name: 'goodput after', unit: 'req/s' }],
  rows: [70, 20, 50, 90].map((r) => ({
    ...(r !== 70 ? { varied: 'load.rate' } : {}),
    factors: { 'load.rate': `${r}% capacity` },
    figures: { 'goodput after': r === 50 ? null : r < 30 ? 12 : 0 },
    verdict: r === 50 ? ('invalid' as const) : r < 30 ? ('recovered' as const) : ('metastable' as const),
  })),
};

/** How many times the SVG matches `re`. */
/** The label "invalid" drawn upright beside the rule (the legend's "invalid" is not rotated). */
const MARK = /rotate\(270\)[^>]*>invalid</g;

function count(svg: string, re: RegExp): number {
  return (svg.match(re) ?? []).length;
}

test('a one-at-a-time sweep draws its invalid point, marked, and its caption names it', async () => {
  const [f] = sweepFigures(rates);
  assert.ok(f);
  assert.ok(f.data.some((d) => d['verdict'] === 'invalid' && d['x'] === 50));
  assert.match(
    f.caption,
    /Invalid \(no valid run, so no value\): 50% capacity, drawn as a dashed line labelled "invalid"/,
  );
  const { svg, warnings } = await renderSvg(f.spec);
  assert.deepEqual(warnings, []);
  assert.equal(count(svg, MARK), 1);
  // Without an invalid point: no such mark (no empty layer).
  const valid = { ...rates, rows: rates.rows.filter((r) => r.verdict !== 'invalid') };
  const [g] = sweepFigures(valid);
  assert.doesNotMatch(g!.caption, /Invalid/);
  assert.equal(count((await renderSvg(g!.spec)).svg, MARK), 0);
});

test('a grid’s interaction plot draws an invalid combination, marked', async () => {
  const grid: SweepTable = {
    design: 'grid',
    factors: [
      { name: 'rate', unit: '% capacity' },
      { name: 'maxAttempts', unit: 'attempts' },
    ],
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    rows: [50, 70].flatMap((r) =>
      [1, 4].map((a) => ({
        factors: { rate: r, maxAttempts: a },
        figures: { 'goodput after': r === 70 && a === 4 ? null : r },
        verdict: r === 70 && a === 4 ? ('invalid' as const) : ('recovered' as const),
      })),
    ),
  };
  const inter = sweepFigures(grid).find((f) => f.id === 'sweep-interaction-goodput-after')!;
  assert.match(inter.caption, /no valid run \(invalid\) is a dashed line labelled "invalid"/);
  const { svg, warnings } = await renderSvg(inter.spec);
  assert.deepEqual(warnings, []);
  assert.equal(count(svg, MARK), 1);
});
