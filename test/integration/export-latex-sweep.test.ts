import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { REPO, runCli, tempDir } from '../helpers/cli.js';
import { readPdfPages } from '../helpers/pdf.js';

// `metabench export latex` on a simulated sweep (three points × two runs, virtual time, no
// lab lock): tables/sweep.tex prints sweep.json's means and the points' 95% intervals to
// three significant figures, methods.tex states the sweep's design, and main.tex compiles.

const dir = tempDir('latex-sweep');
const results = join(dir, 'sweep');
const out = join(dir, 'tex');
let files: string[] = [];

before(async () => {
  const file = join(dir, 'rates.sweep.yaml');
  writeFileSync(
    file,
    [
      'name: latex-check',
      `experiment: ${JSON.stringify(join(REPO, 'experiments', 'retry-storm.yaml'))}`,
      'design: one-at-a-time',
      'factors:',
      '  - { path: load.rate, values: [20% capacity, 90% capacity] }',
      'repeat: 2',
      'runtime: sim',
      '',
    ].join('\n'),
  );
  const s = await runCli(['sweep', file, '--scale', '0.1', '--any-scale', '--out', results, '--jobs', '1']);
  assert.equal(s.code, 0, s.stderr);
  const r = await runCli(['export', 'latex', results, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  files = r.stdout.trim().split('\n');
});

const read = (f: string): string => readFileSync(join(out, f), 'utf8');

interface Dist {
  mean: number | null;
  ci95: [number, number] | null;
}
interface SweepJson {
  rows: {
    factors: Record<string, string>;
    verdict: string;
    runs: number;
    validRuns: number;
    figures: Record<string, number | null>;
  }[];
}

test('export latex on a sweep folder writes tables/sweep.tex, methods.tex, figures and main.tex', () => {
  for (const f of ['tables/sweep.tex', 'figures.tex', 'methods.tex', 'main.tex'])
    assert.ok(files.includes(join(out, f)), `${f} written`);
  assert.ok(read('main.tex').includes('\\input{tables/sweep}'));
  const pdfs = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.pdf'));
  assert.ok(pdfs.includes('sweep-load-rate.pdf'), `the sweep's own figure: ${pdfs.join(', ')}`);
});

test('every number in sweep.tex is sweep.json’s mean or the point’s 95% interval, to three significant figures', () => {
  const sweep = JSON.parse(readFileSync(join(results, 'sweep.json'), 'utf8')) as SweepJson;
  const body = read('tables/sweep.tex').split('\\midrule')[1]!.split('\\bottomrule')[0]!;
  const rows = body
    .split('\\\\')
    .map((r) => r.trim())
    .filter(Boolean)
    .map((r) => r.split('&').map((c) => c.trim()));
  assert.equal(rows.length, 3);
  const sig = (x: number) => Number(x.toPrecision(3));
  const nums = (c: string) => [...c.matchAll(/\\num\{([-\d.e]+)\}/g)].map((m) => Number(m[1]));
  const paths: Record<string, (s: Record<string, unknown>) => Dist | undefined> = {
    'goodput after': (s) => (s.afterTrigger as Record<string, Dist>).goodputPerS,
    'amplification after': (s) => (s.afterTrigger as Record<string, Dist>).amplification,
    'recovery time': (s) => s.recoveryTimeS as Dist | undefined,
  };
  let intervals = 0;
  rows.forEach((cells, i) => {
    const row = sweep.rows[i]!;
    const point = Number(cells[0]);
    const summary = JSON.parse(
      readFileSync(join(results, `point-${point}`, 'summary.json'), 'utf8'),
    ) as Record<string, unknown>;
    assert.equal(cells[1], row.factors['load.rate']!.replace('%', '\\%'));
    assert.equal(cells[2], row.verdict);
    assert.deepEqual(nums(cells[3]!), [row.validRuns, row.runs]);
    Object.entries(paths).forEach(([name, at], j) => {
      const cell = cells[4 + j]!;
      const mean = row.figures[name];
      if (mean === null || mean === undefined) return assert.equal(cell, '--', `${name}, point ${point}`);
      const d = at(summary);
      const expected = [mean, ...(d?.ci95 ?? [])].map(sig);
      if (d?.ci95) intervals++;
      assert.deepEqual(nums(cell), expected, `${name}, point ${point}: ${cell}`);
    });
  });
  assert.ok(intervals > 0, 'two runs a point give intervals');
});

test('methods.tex states the sweep design, factor values, repetitions, scale and the base experiment', () => {
  const text = read('methods.tex');
  const has = (s: string) => assert.ok(text.includes(s), `"${s}" not in:\n${text}`);
  has('one factor at a time');
  has('\\texttt{load.rate} $\\in$ \\{20\\% capacity, 90\\% capacity\\} (reference 70\\% capacity)');
  has('It has 3 points, of which 3 finished; each point ran 2 repetitions');
  has('runtime \\texttt{sim}');
  has('scaled by \\num{0.1}');
  has('What follows describes point 1');
  has('The offered rate was \\SI{280}{\\per\\second}');
});

const pdflatex = spawnSync('pdflatex', ['--version'], { encoding: 'utf8' });
test(
  'a sweep’s main.tex compiles with pdflatex: methods, the sweep table, then the figures two to a page',
  {
    skip: pdflatex.status === 0 ? false : 'no pdflatex (Debian: texlive-latex-base, -recommended, -science)',
  },
  async () => {
    const r = spawnSync('pdflatex', ['-interaction=nonstopmode', '-halt-on-error', 'main.tex'], {
      cwd: out,
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stdout.slice(-3000));
    assert.ok(existsSync(join(out, 'main.pdf')));
    const log = readFileSync(join(out, 'main.log'), 'utf8');
    assert.doesNotMatch(log, /Float too large|Overfull \\hbox/, 'every table and figure fits the page');
    const pages = await readPdfPages(join(out, 'main.pdf'));
    const figures = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.pdf')).length;
    assert.match(pages[0]!, /Methods/);
    // Methods take as many pages as they need; the sweep table has a page, then two figures a page.
    const table = pages.findIndex((p) => /Table 1:/.test(p));
    assert.ok(table >= 1, pages.join('\n---\n').slice(0, 2000));
    assert.match(pages[table]!, /latex-check: one row per point/);
    assert.equal(pages.length, table + 1 + Math.ceil(figures / 2));
    const figurePages = pages.slice(table + 1).join(' ');
    for (let i = 1; i <= figures; i++) assert.match(figurePages, new RegExp(`Figure ${i}:`));
  },
);
