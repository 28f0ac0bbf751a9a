import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';
import { readPdfPages } from '../helpers/pdf.js';
import { runCli, tempDir } from '../helpers/cli.js';

// `metabench export latex` on a simulated retry-storm run (virtual time: seconds, no lab
// lock): methods.tex states what the manifest records, the tables print summary.json's
// values, and main.tex compiles with a real TeX engine (pdflatex) to the expected pages.

const dir = tempDir('latex');
const results = join(dir, 'retry-storm');
const out = join(dir, 'tex');
let files: string[] = [];

before(async () => {
  const run = await runCli([
    'run',
    'experiments/retry-storm.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--any-scale',
    '--out',
    results,
    '--quiet',
  ]);
  assert.ok(run.code === 0 || run.code === 10, run.stderr);
  const r = await runCli(['export', 'latex', results, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  files = r.stdout.trim().split('\n');
});

const read = (f: string): string => readFileSync(join(out, f), 'utf8');

interface Manifest {
  scale: number;
  experiment: {
    lab: { api: { workers: number; work: { dist: string; mean: number } } };
    client: { timeout: number; retry: { policy: string; maxAttempts: number } };
    schedule: { triggers: { kind: string; target: string; duration: number }[] };
    recovery: { within: number; tolerance: number; window: number; hold: number };
    seed: number;
  };
  plan: {
    ratePerS: number;
    phases: { trigger: { startMs: number; endMs: number } };
    recovery: { windowMs: number; holdMs: number };
  };
  capacity: { usedPerS: number };
}

test('export latex writes tables, figure PDFs, figures.tex, methods.tex and main.tex', () => {
  for (const f of [
    'tables/baseline.tex',
    'tables/after-trigger.tex',
    'tables/outcome.tex',
    'tables/policies.tex',
    'figures.tex',
    'methods.tex',
    'main.tex',
  ])
    assert.ok(files.includes(join(out, f)), `${f} written`);
  const pdfs = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.pdf'));
  assert.ok(pdfs.length > 0);
  for (const p of pdfs) {
    assert.equal(
      readFileSync(join(out, 'figures', p))
        .subarray(0, 5)
        .toString(),
      '%PDF-',
    );
    assert.ok(
      read('figures.tex').includes(
        `\\includegraphics[width=\\linewidth,height=0.4\\textheight,keepaspectratio]{figures/${p}}`,
      ),
    );
    assert.ok(read('figures.tex').includes(`\\label{fig:${p.replace(/\.pdf$/, '')}}`));
  }
  for (const t of ['baseline', 'after-trigger', 'outcome', 'policies'])
    assert.ok(read('main.tex').includes(`\\input{tables/${t}}`));
});

test('methods.tex for retry-storm states workers, work, rate, timeout, retries, trigger and recovery criterion as the manifest records them', () => {
  const m = JSON.parse(readFileSync(join(results, 'run-1', 'manifest.json'), 'utf8')) as Manifest;
  const e = m.experiment;
  const text = read('methods.tex');
  const has = (s: string, what: string) => assert.ok(text.includes(s), `${what}: "${s}" not in:\n${text}`);
  has(`ran ${e.lab.api.workers} workers serving a FIFO queue`, 'workers');
  has(`${e.lab.api.work.dist} service times with mean \\SI{${e.lab.api.work.mean}}{\\milli\\second}`, 'work');
  has(`The offered rate was \\SI{${m.plan.ratePerS}}{\\per\\second}`, 'rate');
  has('70\\% of capacity', 'rate as declared');
  has(`was \\SI{${m.capacity.usedPerS}}{\\per\\second}`, 'how % capacity was resolved');
  has(`timeout of \\SI{${e.client.timeout}}{\\milli\\second}`, 'timeout');
  has(`policy \\texttt{${e.client.retry.policy}}, at most ${e.client.retry.maxAttempts} attempts`, 'retries');
  const t = e.schedule.triggers[0]!;
  const ph = m.plan.phases.trigger;
  has(
    `${t.kind} ${t.target} for ${(t.duration * m.scale) / 1000} s, from \\SI{${ph.startMs / 1000}}{\\second} to \\SI{${ph.endMs / 1000}}{\\second}`,
    'trigger and its times',
  );
  has(`$[t, t + ${m.plan.recovery.windowMs / 1000}\\,\\mathrm{s})$`, 'recovery window');
  has(`starting in $[t, t + ${m.plan.recovery.holdMs / 1000}\\,\\mathrm{s}]$`, 'recovery hold');
  has(`tolerance \\SI{${e.recovery.tolerance * 100}}{\\percent}`, 'recovery tolerance');
  has(`at most ${e.recovery.within} times the trigger's duration`, 'recovery deadline');
  has(`seed was ${e.seed}`, 'seed');
  has(`scaled by ${m.scale}`, 'scale');
});

test('the baseline table prints the run’s summary.json values to three significant figures', () => {
  const s = JSON.parse(readFileSync(join(results, 'run-1', 'summary.json'), 'utf8')) as {
    baseline: { goodputPerS: number; latencyMs: { p99: number; samples: number } };
  };
  const row = read('tables/baseline.tex').split('\\midrule')[1]!.split('\\\\')[0]!.split('&');
  const n = (c: string) => Number(/\\num\{([\d.]+)\}/.exec(c)![1]);
  assert.equal(n(row[2]!), Number(s.baseline.goodputPerS.toPrecision(3)));
  assert.equal(n(row[7]!), Number(s.baseline.latencyMs.p99.toPrecision(3)));
  assert.equal(n(row[8]!), s.baseline.latencyMs.samples);
});

test('the client-policies table states the manifest’s timeout and retries and the counts summary.json measured', () => {
  const m = JSON.parse(readFileSync(join(results, 'run-1', 'manifest.json'), 'utf8')) as Manifest;
  const s = JSON.parse(readFileSync(join(results, 'run-1', 'summary.json'), 'utf8')) as {
    outcomes: { timeout: number };
    policies: { retries: number; retriesExhausted: number };
  };
  const t = read('tables/policies.tex');
  assert.ok(t.includes('\\label{tab:policies}'));
  // Each row: "Policy & label: value; label: value & label: value; …".
  const rows = new Map(
    t
      .slice(t.indexOf('\\midrule') + 8, t.indexOf('\\bottomrule'))
      .split('\\\\')
      .map((r) => r.trim())
      .filter((r) => r !== '')
      .map((r) => {
        const [policy, ...cells] = r.split(' & ');
        return [
          policy!,
          cells.map((c) => new Map(c.split('; ').map((i) => i.split(': ') as [string, string]))),
        ];
      }),
  );
  // retry-storm declares a timeout and immediate retries, nothing else.
  assert.deepEqual([...rows.keys()], ['Timeout', 'Retries']);
  const num = (v: string | undefined) => Number(/^\\(?:SI|num)\{([\d.]+)\}/.exec(v ?? '')?.[1]);
  const [timeoutSet, timeoutMeasured] = rows.get('Timeout')!;
  assert.equal(timeoutSet!.get('per attempt'), `\\SI{${m.experiment.client.timeout}}{\\milli\\second}`);
  assert.equal(num(timeoutMeasured!.get('requests failed by timeout')), s.outcomes.timeout);
  const [retrySet, retryMeasured] = rows.get('Retries')!;
  assert.equal(num(retrySet!.get('max.\\ attempts')), m.experiment.client.retry.maxAttempts);
  assert.equal(retrySet!.get('backoff'), m.experiment.client.retry.policy);
  assert.equal(num(retryMeasured!.get('retries scheduled')), s.policies.retries);
  assert.equal(num(retryMeasured!.get('not retried, attempts exhausted')), s.policies.retriesExhausted);
});

const pdflatex = spawnSync('pdflatex', ['--version'], { encoding: 'utf8' });
test(
  'main.tex compiles with pdflatex: methods, the tables, then the figures two to a page',
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
    // A page of methods, the four tables on the pages after it (the three of results, then
    // the client policies), then float pages of two text-width figures each.
    const tablePages = pages.length - 1 - Math.ceil(figures / 2);
    assert.ok(tablePages >= 1 && tablePages <= 2, pages.join('\n---\n').slice(0, 2000));
    assert.match(pages[0]!, /Methods/);
    assert.match(
      pages.slice(1, 1 + tablePages).join(' '),
      /Table 1:[\s\S]*Table 2:[\s\S]*Table 3:[\s\S]*Table 4:\s+retry-storm:\s+the client’s\s+policies[\s\S]*Timeout[\s\S]*Retries/,
    );
    assert.doesNotMatch(pages.slice(1, 1 + tablePages).join(' '), /Figure 1:/);
    const figurePages = pages.slice(1 + tablePages).join(' ');
    for (let i = 1; i <= figures; i++) assert.match(figurePages, new RegExp(`Figure ${i}:`));
  },
);

test('main.tex sets its tables where they are written (float [H]); the tables carry no placement of their own', () => {
  const main = read('main.tex');
  assert.ok(main.includes('\\usepackage{float}'));
  assert.ok(main.includes('\\floatplacement{table}{H}'));
  for (const f of readdirSync(join(out, 'tables')))
    assert.ok(read(`tables/${f}`).startsWith('\\begin{table}\n'), `${f} names no placement`);
});

test('the outcome table prints its seconds with one precision (never "90.0 / 100")', () => {
  const t = read('tables/outcome.tex');
  const row = t.split('\\midrule')[1]!.split('\\\\')[0]!.split('&').slice(3);
  const decimals = row
    .map((c) => /\\num\{-?\d+(?:\.(\d+))?\}/.exec(c)?.[1]?.length ?? null)
    .filter((d) => d !== null);
  assert.ok(decimals.length >= 2, t);
  assert.equal(new Set(decimals).size, 1, `one precision: ${row.join(' & ')}`);
});
