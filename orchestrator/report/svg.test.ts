import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSized, compileSpec, renderSvg, staticSpec } from './svg.js';

// Vega logs while it renders (through the View, which calls the logger with `this` bound to
// itself): a sweep of one point gave an empty extent, and the figure must still be drawn,
// with Vega's warning collected for the report rather than a crash.
test('a figure Vega warns about while rendering (an empty extent) is drawn, the warning collected', async () => {
  const spec = {
    data: { values: [] },
    mark: 'line',
    encoding: {
      x: { field: 'factor', type: 'quantitative' },
      y: { field: 'value', type: 'quantitative' },
    },
  };
  const { svg, warnings } = await renderSvg(spec);
  assert.match(svg, /<svg[\s>]/);
  assert.ok(
    warnings.some((w) => /^warn: Infinite extent for field "value"/.test(w)),
    `warnings: ${warnings.join('; ')}`,
  );
});

test('a spec with no view is refused by name', async () => {
  await assert.rejects(compileSpec({ data: { values: [] } }), /not a Vega-Lite view/);
});

// A figure's SVG and the first drawing of its print (pdf.ts) are of the same spec: drawn once,
// each caller given its own warnings to keep.
test('the same spec drawn twice in a row is the same drawing, each caller with its own warnings', async () => {
  const spec = {
    data: { values: [{ x: 1, y: 2 }] },
    mark: 'point',
    encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } },
  };
  const a = await renderSvg(spec);
  a.warnings.push('mine');
  const b = await renderSvg(structuredClone(spec));
  assert.equal(b.svg, a.svg);
  assert.deepEqual(b.warnings, []);
  const other = await renderSvg({ ...spec, mark: 'line' });
  assert.notEqual(other.svg, a.svg);
});

// Tooltips are left out of the drawing (a browser's, never in an SVG): the SVG is the one
// vega draws from the whole compiled spec, tooltips and all.
test('a figure with tooltips is drawn as vega draws it with them', async () => {
  const spec = {
    data: { values: [1, 2, 3].map((x) => ({ x, y: x * x, s: x % 2 ? 'odd' : 'even' })) },
    mark: { type: 'point', tooltip: true },
    encoding: {
      x: { field: 'x', type: 'quantitative' },
      y: { field: 'y', type: 'quantitative', format: ',.3~f' },
      color: { field: 's', type: 'nominal' },
      tooltip: [{ field: 'x', type: 'quantitative', title: 'time (s)' }, { field: 'y' }],
    },
  };
  const { svg } = await renderSvg(spec);
  const vega = await import('vega');
  const { vega: compiled } = await compileSpec(staticSpec(spec) as typeof spec);
  assert.match(JSON.stringify(compiled), /"tooltip"/);
  vega.resetSVGDefIds();
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  assert.equal(svg, `<?xml version="1.0" encoding="UTF-8"?>\n${await view.toSVG()}\n`);
  view.finalize();
});

// A figure's print is its spec at other widths, compiled once with the widths as placeholders:
// the Vega spec at each width is Vega-Lite's own output at that width (as JSON: Vega-Lite's
// signal references are objects with a getter, the copy's plain ones).
test('a spec compiled at its widths is what Vega-Lite compiles at each of them', async () => {
  const rows = [0, 1, 2, 340, 1_000_000].map((t, i) => ({
    t_s: t,
    value: i * 340,
    series: i % 2 ? 'a' : 'b',
  }));
  const line = {
    data: { values: rows },
    mark: 'line',
    encoding: {
      x: { field: 't_s', type: 'quantitative' },
      y: { field: 'value', type: 'quantitative' },
      color: { field: 'series', type: 'nominal' },
    },
  };
  const grid = {
    data: { values: rows },
    mark: 'rect',
    width: 340,
    encoding: { x: { field: 'series', type: 'nominal' }, y: { field: 't_s', type: 'ordinal' } },
  };
  const at = (spec: Record<string, unknown>, px: number) => ({
    ...spec,
    ...(typeof spec['width'] === 'number' ? { width: px - 20 } : {}),
    config: { view: { continuousWidth: px, continuousHeight: 170 }, axis: { labelFontSize: 11 } },
  });
  for (const spec of [
    line,
    { layer: [line, line] },
    { vconcat: [line, line] },
    { hconcat: [line, line] },
    grid,
  ])
    for (const px of [340, 267, 248, 340])
      assert.equal(
        JSON.stringify(await compileSized(at(spec, px))),
        JSON.stringify(await compileSpec(staticSpec(at(spec, px)) as Record<string, unknown>)),
      );
});
