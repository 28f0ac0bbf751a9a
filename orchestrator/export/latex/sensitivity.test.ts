import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunSummary } from '../../analysis/summary.js';
import { recoversAt3D, sensitivityOf } from '../../../test/helpers/sensitivityData.js';
import { sensitivityParagraph, sensitivityTables } from './sensitivity.js';

const run = (index: number, sensitivity: RunSummary['sensitivity']) => ({
  index,
  summary: { sensitivity } as RunSummary,
});

test('tables/sensitivity.tex: a row per k, a column per tolerance, the own criterion in bold, the sentence in the caption', () => {
  const [t] = sensitivityTables('retry-storm', [run(1, recoversAt3D())]);
  assert.ok(t);
  assert.equal(t.id, 'sensitivity');
  assert.match(t.tex, /\\label\{tab:sensitivity\}/);
  assert.match(t.tex, /Recovered within & Tolerance 5\\% & Tolerance 10\\% & Tolerance 20\\% \\\\/);
  assert.match(t.tex, /\$2 \\times D\$ & recovered-late & recovered-late & recovered-late \\\\/);
  assert.match(t.tex, /\$5 \\times D\$ & recovered & \\textbf\{recovered\} & recovered \\\\/);
  assert.match(
    t.tex,
    /Flips: recovered-late with k = 2, recovered with k \$\\geq\$ 5; tolerance does not matter\.\}/,
  );
});

test('methods.tex’s paragraph says how the table was made and states its finding; nothing for invalid runs', () => {
  const p = sensitivityParagraph([
    run(
      1,
      sensitivityOf(100, () => 100, { tolerance: 0.2 }),
    ),
  ]);
  assert.match(p, /^\n\\paragraph\{Sensitivity to the recovery criterion\.\}/);
  assert.match(p, /\$k \\in \\\{2, 5, 10\\\}\$ and a tolerance in \$\\\{5\\%, 10\\%, 20\\%\\\}\$/);
  assert.match(p, /here 13\.4\\%, was not computed/);
  assert.match(p, /The outcome is robust: recovered under every allowed criterion\.\n$/);
  assert.equal(sensitivityParagraph([run(1, null)]), '');
  assert.deepEqual(sensitivityTables('x', [run(1, null)]), []);
  const below = sensitivityParagraph([
    run(
      1,
      sensitivityOf(100, () => 100),
    ),
  ]);
  assert.match(below, /own tolerance, 10\\%, is itself below that floor/);
});

const pdflatex = spawnSync('pdflatex', ['--version'], { encoding: 'utf8' });
test(
  'the table and the paragraph compile with pdflatex, for one run and for a tally of runs',
  { skip: pdflatex.status === 0 ? false : 'no pdflatex (Debian: texlive-latex-base, -recommended)' },
  () => {
    const one = [run(1, recoversAt3D())];
    const many = [
      run(1, recoversAt3D()),
      run(
        2,
        sensitivityOf(1000, (i) => (i < 5 ? 0 : 1000)),
      ),
      run(3, null),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'sensitivity-tex-'));
    const doc = [
      '\\documentclass[11pt,a4paper]{article}',
      '\\usepackage[utf8]{inputenc}',
      '\\usepackage[margin=2.5cm]{geometry}',
      '\\usepackage{booktabs}',
      '\\usepackage{array}',
      '\\usepackage{siunitx}',
      '\\begin{document}',
      sensitivityParagraph(one),
      ...sensitivityTables('one run', one).map((t) => t.tex),
      sensitivityParagraph(many),
      ...sensitivityTables('three runs', many).map((t) => t.tex.replace('tab:sensitivity', 'tab:many')),
      '\\end{document}',
      '',
    ].join('\n');
    writeFileSync(join(dir, 'doc.tex'), doc);
    const r = spawnSync('pdflatex', ['-interaction=nonstopmode', '-halt-on-error', 'doc.tex'], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stdout.slice(-3000));
    assert.doesNotMatch(r.stdout, /Overfull \\hbox/);
  },
);
