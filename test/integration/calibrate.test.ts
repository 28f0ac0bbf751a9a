import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CalibrationResult } from '../../orchestrator/calibrate/runCalibration.js';
import { isStepTable, type StepTable } from '../../orchestrator/report/tables.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { readPdfPages } from '../helpers/pdf.js';

// Issue 7: a scaled step test on the real local lab. The api has a small, known capacity
// (4 workers x 20 ms of constant work = 200/s nominal; a little less in practice: each
// request also costs the api some CPU). Constant arrivals keep 3-second steps from
// being decided by Poisson bursts. About 40 s: 6 steps + 1 bisection + the 150% step.
const EXPERIMENT = `name: calibrate-small
lab:
  api: { workers: 4, work: { dist: constant, mean: 20ms } }
load:
  arrival: constant
  rate: 70% capacity
  productionPeak: 100/s
client:
  timeout: 500ms
  retry: { policy: immediate, maxAttempts: 3 }
schedule:
  warmup: 5s
  baseline: 10s
  trigger: { kind: pause, target: api, duration: 2s }
  observe: 20s
recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }
`;

test('calibrate finds the saturation point near the nominal capacity, writes steps.json and a report, and stores the capacity for % capacity', async () => {
  const dir = tempDir('calibrate');
  const state = join(dir, 'state');
  const file = join(dir, 'small.yaml');
  writeFileSync(file, EXPERIMENT);
  const out = join(dir, 'out');
  const env = { METABENCH_STATE_DIR: state };
  const r = await runCli(
    [
      'calibrate',
      file,
      '--steps',
      '60/s,100/s,140/s,180/s,220/s,260/s',
      '--step-duration',
      '3s',
      '--settle',
      '1s',
      '--refine',
      '1',
      '--out',
      out,
      '--quiet',
    ],
    env,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout.trim(), out);

  const c = JSON.parse(readFileSync(join(out, 'calibration.json'), 'utf8')) as CalibrationResult;
  assert.equal(c.status, 'saturated', c.reason);
  const sat = c.saturation!.offeredPerS;
  // A generous tolerance: this is a measurement on a shared 2-core machine, not a timing test.
  assert.ok(sat >= 100 && sat <= 240, `saturation at ${sat}/s, nominal 200/s`);
  assert.ok(c.saturation!.goodputPerS! >= 0.9 * sat);
  // The client was the experiment's timeout without its retries.
  assert.match(c.client, /per-attempt timeout 500ms, retry none/);
  // Margin against the declared production peak, and goodput at 150% of saturation.
  assert.equal(c.margin.productionPeakPerS, 100);
  assert.equal(c.margin.ratio, Math.round((sat / 100) * 1000) / 1000);
  assert.ok(c.overload, 'the 150% step ran');
  assert.equal(c.overload.offeredPerS, Math.round(1.5 * sat * 1000) / 1000);
  assert.ok(c.overload.goodputPerS !== null && c.overload.goodputPerS < 1.5 * sat * 0.95);
  assert.deepEqual(
    c.steps.filter((s) => s.kind === 'ladder').map((s) => s.ratePerS),
    [60, 100, 140, 180, 220, 260],
  );
  assert.ok(c.steps.every((s) => s.seconds === 2 && s.offered > 0));

  // steps.json has the shape the report draws, with the saturation point.
  const steps = JSON.parse(readFileSync(join(out, 'steps.json'), 'utf8')) as StepTable;
  assert.ok(isStepTable(steps));
  assert.equal(steps.steps.length, c.steps.length);
  assert.deepEqual(steps.saturation, { offeredPerS: sat, goodputPerS: c.saturation!.goodputPerS });

  // The report: the result, the steps, the step figures.
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /## Result/);
  assert.match(md, new RegExp(`Saturation point: ${sat} req/s`));
  assert.match(md, /Goodput at 150% of saturation/);
  for (const f of ['steps-goodput', 'steps-latency', 'steps-throughput'])
    assert.ok(existsSync(join(out, 'figures', `${f}.svg`)), f);
  assert.ok(existsSync(join(out, 'report.html')));
  assert.ok(existsSync(join(out, 'timeseries.csv')));
  const manifest = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')) as {
    kind: string;
    runtime: string;
    machine: { cpus: number };
  };
  assert.equal(manifest.kind, 'calibration');
  assert.equal(manifest.runtime, 'local');
  assert.ok(manifest.machine.cpus > 0);

  // `metabench report DIR` renders the calibration folder again, the same.
  const again = await runCli(['report', out]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(readFileSync(join(out, 'report.md'), 'utf8'), md);

  await exportsLatex(out, c);

  // Stored with the machine; a later run of the same lab resolves % capacity against it.
  assert.ok('file' in c.stored && existsSync(c.stored.file) && c.stored.file.startsWith(state));
  const dry = await runCli(['run', '--any-scale', file, '--dry-run'], env);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, new RegExp(`${sat}/s measured; ${sat}/s used for % capacity`));
  assert.match(dry.stdout, new RegExp(`mean ${Math.round(0.7 * sat * 1000) / 1000}/s`));
  // Another lab configuration does not use it.
  const other = await runCli(['run', '--any-scale', file, '--dry-run', '--set', 'lab.api.workers=5'], env);
  assert.match(other.stdout, /250\/s used for % capacity/);
  assert.match(other.stdout, /no calibration of this lab on this machine/);
});

/**
 * `metabench export latex` on the calibration folder this test made (no second lab run):
 * every number of the step and capacity tables parses back to calibration.json's value
 * (declared rates exactly, measured ones to three significant figures), methods.tex states
 * the ladder, step length and rule, and main.tex compiles with pdflatex.
 */
async function exportsLatex(dir: string, c: CalibrationResult): Promise<void> {
  const out = join(dir, '..', 'latex');
  const r = await runCli(['export', 'latex', dir, '--out', out]);
  assert.equal(r.code, 0, r.stderr);
  const read = (f: string): string => readFileSync(join(out, f), 'utf8');
  const main = read('main.tex');
  for (const t of ['steps', 'capacity']) assert.ok(main.includes(`\\input{tables/${t}}`), t);
  const rows = (t: string): string[][] =>
    t
      .slice(t.indexOf('\\midrule') + 8, t.indexOf('\\bottomrule'))
      .split('\\\\')
      .map((x) => x.trim())
      .filter((x) => x !== '')
      .map((x) => x.split(' & ').map((cell) => cell.trim()));
  const num = (cell: string): number | null => {
    if (cell === '--') return null;
    const m = /^\\(?:num|SI)\{(-?[\d.]+)\}/.exec(cell);
    assert.ok(m, `not a number: ${cell}`);
    return Number(m[1]);
  };
  const sig3 = (x: number | null): number | null => (x === null ? null : Number(x.toPrecision(3)));

  const steps = rows(read('tables/steps.tex'));
  assert.equal(steps.length, c.steps.length, 'one row per step');
  steps.forEach((cells, i) => {
    const s = c.steps[i]!;
    assert.deepEqual(cells.slice(0, 2), [String(s.index), s.kind]);
    assert.equal(num(cells[2]!), s.ratePerS, `step ${s.index}: rate`);
    assert.deepEqual(
      [3, 4, 5, 6, 7].map((k) => num(cells[k]!)),
      [s.offeredPerS, s.goodputPerS, s.goodputRatio, s.latencyMs.p50, s.latencyMs.p99].map(sig3),
      `step ${s.index}: offered, goodput, ratio, p50, p99`,
    );
    assert.equal(num(cells[8]!), s.latencyMs.samples, `step ${s.index}: samples`);
    assert.equal(cells[9], s.sustained === null ? '--' : s.sustained ? 'yes' : 'no');
  });

  const capacityRows = rows(read('tables/capacity.tex'));
  const capacity = new Map(capacityRows.map(([k, v]) => [k!, v!]));
  assert.equal(capacity.size, capacityRows.length, 'each quantity once');
  assert.equal(capacity.get('Status'), c.status);
  assert.equal(
    capacity.get('Capacity (saturation point)'),
    `\\SI{${c.saturation!.offeredPerS}}{\\per\\second}`,
  );
  assert.equal(num(capacity.get('Offered at capacity, measured')!), sig3(c.saturation!.measuredOfferedPerS));
  assert.equal(num(capacity.get('Goodput at capacity')!), sig3(c.saturation!.goodputPerS));
  assert.equal(num(capacity.get('p99 at capacity')!), sig3(c.saturation!.p99Ms));
  assert.equal(num(capacity.get('Rule: goodput tolerance')!), c.rule.tolerance * 100);
  assert.equal(num(capacity.get('Rule: p99 factor')!), c.rule.latencyFactor);
  assert.equal(num(capacity.get('Reference p99 (lowest step)')!), sig3(c.referenceP99Ms));
  assert.equal(num(capacity.get('Nominal capacity')!), c.nominalCapacityPerS);
  assert.equal(num(capacity.get('Production peak (declared)')!), c.margin.productionPeakPerS);
  assert.equal(num(capacity.get('Margin (capacity / peak)')!), c.margin.ratio);
  assert.equal(num(capacity.get('Peak goodput')!), sig3(c.peakGoodput!.goodputPerS));
  assert.equal(num(capacity.get('Peak goodput at')!), c.peakGoodput!.offeredPerS);
  const o = c.overload!;
  assert.equal(num(capacity.get('Overload probe at')!), o.offeredPerS);
  assert.equal(num(capacity.get('Goodput at the probe')!), sig3(o.goodputPerS));
  assert.equal(num(capacity.get('Probe goodput / goodput at capacity')!), sig3(o.ofSaturationGoodput));
  assert.equal(num(capacity.get('Probe goodput / offered')!), sig3(o.ofOffered));
  assert.equal(num(capacity.get('p99 at the probe')!), sig3(o.p99Ms));

  const methods = read('methods.tex');
  const has = (s: string) => assert.ok(methods.includes(s), `"${s}" not in:\n${methods}`);
  has('The step test ran on a machine with');
  has('runtime \\texttt{local}');
  has('ran 4 workers serving a FIFO queue');
  has(
    `a ladder of ${c.plan.ladderPerS.length} steps at ${c.plan.ladderPerS.map((x) => `\\num{${x}}`).join(', ')}`,
  );
  has(
    `each lasting \\SI{${c.plan.stepS}}{\\second}, of which the first \\SI{${c.plan.settleS}}{\\second} settled`,
  );
  has(
    `at least \\SI{${(1 - c.rule.tolerance) * 100}}{\\percent} of the rate it offered and its p99 at most ${c.rule.latencyFactor} times`,
  );

  const refined = c.steps.filter((s) => s.kind === 'refine').length;
  has(
    `up to ${c.plan.refine} bisection${c.plan.refine === 1 ? '' : 's'} between the saturation step and the step above it (${refined} ran`,
  );
  has(
    `so its client (${c.client}) replaced the experiment's (per-attempt timeout 500ms, retry immediate up to 3 attempts`,
  );
  const pdflatex = spawnSync('pdflatex', ['--version'], { encoding: 'utf8' });
  if (pdflatex.status !== 0) return; // no TeX engine here (Debian: texlive-latex-base, -recommended, -science)
  const tex = spawnSync('pdflatex', ['-interaction=nonstopmode', '-halt-on-error', 'main.tex'], {
    cwd: out,
    encoding: 'utf8',
  });
  assert.equal(tex.status, 0, tex.stdout.slice(-3000));
  const log = readFileSync(join(out, 'main.log'), 'utf8');
  assert.doesNotMatch(log, /Float too large|Overfull \\hbox/, 'every table and figure fits the page');
  const pages = await readPdfPages(join(out, 'main.pdf'));
  const figures = readdirSync(join(out, 'figures')).filter((f) => f.endsWith('.pdf')).length;
  assert.ok(figures >= 2, 'the step figures as PDF');
  // Methods, a page of the two tables, then the figures two to a page.
  assert.equal(pages.length, 2 + Math.ceil(figures / 2), pages.join('\n---\n').slice(0, 2000));
  assert.match(pages[0]!, /Methods[\s\S]*Step test[\s\S]*Saturation rule/);
  assert.match(pages[1]!, /Table 1:[\s\S]*Table 2:/);
  for (let i = 1; i <= figures; i++) assert.match(pages.slice(2).join(' '), new RegExp(`Figure ${i}:`));
}
