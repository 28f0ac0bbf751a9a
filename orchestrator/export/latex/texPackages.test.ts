import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { debianPackages, MAIN_TEX_PACKAGES, texProblems } from './texPackages.js';

const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const tex =
  spawnSync('kpsewhich', ['--version']).status === 0 && spawnSync('pdflatex', ['--version']).status === 0;

test(
  'a package kpsewhich does not find is named, with the package to install on each platform',
  { skip: !tex && 'no TeX here' },
  () => {
    const absent = {
      name: 'metabench-absent-package',
      debian: 'texlive-metabench-absent',
      tlmgr: 'metabench-absent',
    };
    const m = texProblems([MAIN_TEX_PACKAGES.find((p) => p.name === 'booktabs')!, absent]);
    assert.ok(m !== null);
    assert.match(
      m,
      /metabench-absent-package\.sty \(Debian\/Ubuntu package texlive-metabench-absent\) not found by kpsewhich/,
    );
    assert.doesNotMatch(m, /booktabs\.sty/);
    assert.match(m, /Debian\/Ubuntu: sudo apt-get install texlive-latex-base texlive-metabench-absent/);
    assert.match(m, /Fedora: sudo dnf install texlive-scheme-basic texlive-metabench-absent/);
    assert.match(m, /BasicTeX: sudo tlmgr install metabench-absent/);
  },
);

test(
  'on this machine (the documented package set) main.tex has everything it needs',
  { skip: !tex && 'no TeX here' },
  () => {
    assert.equal(texProblems(), null);
  },
);

test('without pdflatex on the PATH, the message says so and how to install TeX', () => {
  const m = texProblems(MAIN_TEX_PACKAGES, { ...process.env, PATH: '/nonexistent' });
  assert.ok(m !== null);
  assert.match(m, /needs pdflatex, which is not on this PATH/);
  assert.match(m, /sudo apt-get install texlive-latex-base texlive-latex-recommended texlive-science/);
});

test('docs/export.md and .ci/run name exactly the Debian packages main.tex needs', () => {
  const set = debianPackages();
  assert.deepEqual(set, ['texlive-latex-base', 'texlive-latex-recommended', 'texlive-science']);
  const ci = readFileSync(`${REPO}.ci/run`, 'utf8');
  const installed = /apt-get install[^\n]*--no-install-recommends \\\n\s*(texlive[^\n]*)/.exec(ci);
  assert.ok(installed, '.ci/run installs the LaTeX packages on one line after --no-install-recommends');
  assert.deepEqual(installed[1]!.trim().split(/\s+/).sort(), set);
  const docs = readFileSync(`${REPO}docs/export.md`, 'utf8');
  assert.ok(docs.includes(`apt-get install ${set.join(' ')}`), 'docs/export.md gives the apt-get line');
});
