import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileSpec, renderSvg } from './svg.js';

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
