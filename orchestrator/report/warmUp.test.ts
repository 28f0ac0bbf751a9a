import { test } from 'node:test';
import assert from 'node:assert/strict';
import { warmUp } from './warmUp.js';
import { renderSvg } from './svg.js';
import { printFigure, svgToPdf } from './pdf.js';

/** The warming pauses without holding the process open (warmUp.ts): a test holds it. */
async function held<T>(f: () => Promise<T>): Promise<T> {
  const hold = setInterval(() => {}, 1000);
  try {
    return await f();
  } finally {
    clearInterval(hold);
  }
}

// The warming draws figures of its own in the process that then draws the report's: what
// the report draws must not depend on it (numbering, caches, fonts).
test('a figure drawn after the warming is the figure drawn before it, byte for byte', async () => {
  const spec = {
    config: { view: { continuousWidth: 340, continuousHeight: 170 } },
    data: { values: [0, 1, 2, 3].map((t) => ({ t_s: t, value: t * t, series: t % 2 ? 'odd' : 'even' })) },
    mark: { type: 'line', clip: true },
    encoding: {
      x: { field: 't_s', type: 'quantitative', title: 'time since start (s)' },
      y: { field: 'value', type: 'quantitative' },
      color: { field: 'series', type: 'nominal' },
    },
  };
  const draw = async () => {
    const { svg } = await renderSvg(spec);
    return { svg, pdf: await svgToPdf((await printFigure(spec, 'column')).svg, 8.5, 'x') };
  };
  const before = await draw();
  await held(() => warmUp());
  const after = await draw();
  assert.equal(after.svg, before.svg);
  assert.deepEqual(after.pdf, before.pdf);
});

test('the warming stops when asked', async () => {
  let asked = 0;
  await held(() => warmUp(() => ++asked > 0));
  assert.equal(asked, 1);
});
