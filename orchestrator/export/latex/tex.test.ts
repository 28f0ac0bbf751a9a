import assert from 'node:assert/strict';
import { test } from 'node:test';
import { num, tex } from './tex.js';

test('tex escapes what LaTeX would read as commands, and names a character pdflatex cannot set', () => {
  assert.equal(
    tex('50% of 8_workers & {x} #1 $2 ~ ^'),
    '50\\% of 8\\_workers \\& \\{x\\} \\#1 \\$2 \\textasciitilde{} \\textasciicircum{}',
  );
  assert.equal(tex('a\\b'), 'a\\textbackslash{}b');
  assert.equal(tex('3 × 8 ± 2 − 1 → ∞'), '3 $\\times$ 8 $\\pm$ 2 $-$ 1 $\\rightarrow$ $\\infty$');
  assert.equal(tex('naïve ✓'), 'naïve [U+2713]');
  // OT1 text sets < > | as ¡ ¿ —: named instead.
  assert.equal(tex('a < b > c | d'), 'a \\textless{} b \\textgreater{} c \\textbar{} d');
});

test('num prints three significant figures with no thousands separator, and -- when unmeasured', () => {
  assert.equal(num(1140.349), '\\num{1140}');
  assert.equal(num(0.0153049), '\\num{0.0153}');
  assert.equal(num(null), '--');
  assert.equal(num(Number.NaN), '--');
});
