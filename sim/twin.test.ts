import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TWIN_DIR } from '../orchestrator/report/load.js';
import { writeReport } from '../orchestrator/report/writeReport.js';
import { runExperiment } from '../orchestrator/run/runExperiment.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';

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
  assert.match(section, /\| verdict \| \*\*metastable\*\* \| \*\*metastable\*\* \| the same \|/);
  assert.match(section, /\| amplification after the trigger \(client\) \| [\d.]+ \| [\d.]+ \| -?[\d.]+ \(/);
  assert.match(section, /\| goodput after the trigger \(req\/s\) \|/);
  assert.match(section, /\| recovery time \| not recovered \| not recovered \| – \|/);
  assert.match(readFileSync(join(dir, 'report.html'), 'utf8'), /Model vs bench/);
  // The twin has its own report, marked simulated.
  assert.match(readFileSync(join(dir, TWIN_DIR, 'report.md'), 'utf8'), /\*\*Simulated\*\*/);
});
