import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TWIN_DIR } from '../orchestrator/report/load.js';
import { writeReport } from '../orchestrator/report/writeReport.js';
import { runExperiment } from '../orchestrator/run/runExperiment.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import { runCli } from '../test/helpers/cli.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import { ctmcBeside } from '../orchestrator/analysis/markov/experiment.js';
import type { RunSummary } from '../orchestrator/analysis/summary.js';
import { round } from '../foundation/round.js';

registerRuntimes();

test('a results folder with a simulated twin: report.md shows both side by side, with the difference', async () => {
  // Two runtimes would be lab and sim; the report only reads the folders, so a simulated
  // "bench" with a different seed stands in for the lab here (the lab tests run the real pair).
  const dir = join(mkdtempSync(join(tmpdir(), 'metabench-twin-')), 'out');
  const e = loadExperimentFile('experiments/retry-storm.yaml');
  const common = { scale: 0.1, quiet: true, stop: new AbortController().signal, runtime: 'sim' as const };
  await runExperiment({ ...e, seed: 7 }, { ...common, out: dir });
  await runExperiment(e, { ...common, out: join(dir, TWIN_DIR) });
  await writeReport(dir);
  const md = readFileSync(join(dir, 'report.md'), 'utf8');
  const section = md.slice(md.indexOf('## Model vs bench'));
  assert.ok(md.includes('## Model vs bench'), md.slice(0, 2000));
  assert.match(section, /\| outcome \| \*\*metastable\*\* \| \*\*metastable\*\* \| the same \|/);
  assert.match(section, /\| amplification after the trigger \(client\) \| [\d.]+ \| [\d.]+ \| -?[\d.]+ \(/);
  assert.match(section, /\| goodput after the trigger \(req\/s\) \|/);
  assert.match(section, /\| recovery time \| not recovered \| not recovered \| – \|/);
  // Beside both, the Markov model's prediction for the same experiment and recovery deadline.
  const summary = JSON.parse(readFileSync(join(dir, 'run-1', 'summary.json'), 'utf8')) as RunSummary;
  const c = ctmcBeside({ ...e, seed: 7 }, summary.offeredPerS, summary.recoveryDeadlineS);
  assert.ok(c.recoveryS !== null && c.pRecoveredWithin !== null);
  assert.ok(
    section.includes(
      `| recovery time, Markov model (CTMC) | mean ${round(c.recoveryS, 3)} s from a full server; P(recovered within ${summary.recoveryDeadlineS} s) ${round(c.pRecoveredWithin, 3)} |`,
    ),
    section,
  );
  // retry-storm at 70% of capacity: the chain too says a full server stays collapsed past the deadline.
  assert.ok(c.pRecoveredWithin < 0.01 && c.recoveryS > 100 * summary.recoveryDeadlineS, JSON.stringify(c));
  assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /Model vs bench/);
  // The twin has its own report, marked simulated.
  assert.match(readFileSync(join(dir, TWIN_DIR, 'report.md'), 'utf8'), /\*\*Simulated\*\*/);
});

test('metabench sweep --runtime sim runs every point in simulation; a sweep file may say runtime: sim', async () => {
  const base = mkdtempSync(join(tmpdir(), 'metabench-simsweep-'));
  const r = await runCli([
    'sweep',
    'experiments/retry-storm-rate.sweep.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--any-scale',
    '--out',
    join(base, 's'),
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const table = JSON.parse(readFileSync(join(base, 's', 'sweep.json'), 'utf8')) as {
    rows: { factors: Record<string, string>; verdict: string }[];
  };
  // The reference (70%), then the other points: 20% (80/s) is below cμ/m = 100/s and
  // recovers; 30% (120/s) is just above it, where the 1 s pause of scale 0.1 is too small
  // a trigger (the 10 s pause of scale 1 and the 2 s of 0.2 tip it); 50% and 90% collapse.
  assert.deepEqual(
    table.rows.map((x) => [x.factors['load.rate'], x.verdict]),
    [
      ['70% capacity', 'metastable'],
      ['20% capacity', 'recovered'],
      ['30% capacity', 'recovered'],
      ['50% capacity', 'metastable'],
      ['90% capacity', 'metastable'],
    ],
  );
  const plan = JSON.parse(readFileSync(join(base, 's', 'sweep-plan.json'), 'utf8')) as { runtime: string };
  assert.equal(plan.runtime, 'sim');
  const manifest = JSON.parse(readFileSync(join(base, 's', 'point-1', 'run-1', 'manifest.json'), 'utf8')) as {
    runtime: string;
  };
  assert.equal(manifest.runtime, 'sim');
  // And from the sweep file itself.
  const file = join(base, 'sim.sweep.yaml');
  writeFileSync(
    file,
    readFileSync('experiments/retry-storm-rate.sweep.yaml', 'utf8')
      .replace('runtime: local', 'runtime: sim')
      .replace(
        'experiment: retry-storm.yaml',
        `experiment: ${join(process.cwd(), 'experiments/retry-storm.yaml')}`,
      )
      .replace(/values: \[[^\]]*\]/, 'values: [20% capacity]'),
  );
  const r2 = await runCli([
    'sweep',
    file,
    '--scale',
    '0.1',
    '--any-scale',
    '--out',
    join(base, 's2'),
    '--quiet',
  ]);
  assert.equal(r2.code, 0, r2.stderr);
  const t2 = JSON.parse(readFileSync(join(base, 's2', 'sweep.json'), 'utf8')) as {
    rows: { verdict: string }[];
  };
  assert.deepEqual(
    t2.rows.map((x) => x.verdict),
    ['metastable', 'recovered'],
  );
});
