import { test } from 'node:test';
import assert from 'node:assert/strict';
import { results, runData } from '../../test/helpers/reportData.js';
import { recoversAt3D, sensitivityOf } from '../../test/helpers/sensitivityData.js';
import { renderHtml } from './html.js';
import { renderMarkdown, reportSections, reportTitle } from './markdown.js';

/** The section's text in report.md, from its heading to the next. */
function section(md: string): string {
  const from = md.indexOf('## Sensitivity to the recovery criterion');
  if (from < 0) return '';
  const to = md.indexOf('\n## ', from + 1);
  return md.slice(from, to < 0 ? undefined : to);
}

test('report.md: the sensitivity section follows After the trigger, sentence first, the run’s own criterion in bold', () => {
  const x = results([runData(1, undefined, { outcome: 'recovered', sensitivity: recoversAt3D() })]);
  const ids = reportSections(x).map((s) => s.id);
  assert.equal(ids[ids.indexOf('after-trigger') + 1], 'sensitivity');
  const s = section(renderMarkdown(x));
  assert.match(s, /\nFlips: recovered-late with k = 2, recovered with k ≥ 5; tolerance does not matter\.\n/);
  assert.match(s, /\| recovered within \| tolerance 5% \| tolerance 10% \| tolerance 20% \|/);
  assert.match(s, /\| 2 × D \(20 s\) \| recovered-late \| recovered-late \| recovered-late \|/);
  assert.match(
    s,
    /\| 5 × D \(50 s\) \| recovered \| \*\*recovered\*\* \(this run’s criterion\) \| recovered \|/,
  );
  assert.match(s, /3\/√\(baseline goodput × W\) = 4\.2%/);
  assert.doesNotMatch(s, /below noise floor/);
  // report.html is rendered from the same sections.
  const html = renderHtml(reportTitle(x), reportSections(x));
  assert.match(html, /<section id="sensitivity">/);
  assert.match(html, /<strong>recovered<\/strong> \(this run’s criterion\)/);
});

test('report.md: cells below the noise floor say so with the floor, and an own tolerance below it is flagged', () => {
  // 100/s over a 5 s window: floor 3/√500 = 13.4%.
  const sens = sensitivityOf(100, () => 100, { tolerance: 0.1 });
  const s = section(renderMarkdown(results([runData(1, undefined, { sensitivity: sens })])));
  assert.match(
    s,
    /\| 2 × D \(20 s\) \| —, below noise floor 13\.4% \| —, below noise floor 13\.4% \| recovered \|/,
  );
  assert.match(s, /\*\*recovered\*\* \(this run’s criterion\)/);
  assert.match(s, /⚠ The run’s own tolerance \(10%\) is below the noise floor of its window \(13\.4%\)/);
});

test('report.md: no sensitivity section for an invalid run, nor for a summary written before it existed', () => {
  assert.equal(section(renderMarkdown(results([runData(1, undefined, { sensitivity: null })]))), '');
  assert.equal(section(renderMarkdown(results([runData(1)]))), '');
});

test('report.md with repetitions: each cell tallies the valid runs, an invalid run left out', () => {
  const late = recoversAt3D();
  const fast = sensitivityOf(1000, (i) => (i < 5 ? 0 : 1000));
  const s = section(
    renderMarkdown(
      results([
        runData(1, undefined, { sensitivity: late }),
        runData(2, undefined, { sensitivity: fast }),
        runData(3, undefined, { sensitivity: null }),
      ]),
    ),
  );
  assert.match(s, /Flips: recovered 1\/2, recovered-late 1\/2 with k = 2, recovered 2\/2 with k ≥ 5/);
  assert.match(s, /\*\*recovered 2\/2\*\* \(the experiment’s criterion\)/);
  assert.match(s, /counts the outcomes of the 2 valid runs/);
});
