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
