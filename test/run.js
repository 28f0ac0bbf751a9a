#!/usr/bin/env node
// Runs the compiled tests with node's test runner.
//   node test/run.js           every test
//   node test/run.js --unit    only the fast, pure ones (no lab processes)
//   node test/run.js --repro   only the reproduction suite (test/repro: each catalogue
//                              experiment, scaled, asserting its qualitative outcome)
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const unitOnly = process.argv.includes('--unit');
const reproOnly = process.argv.includes('--repro');
const isLab = (f) => f.startsWith(join('dist', 'test', 'integration')) || isRepro(f);
const isRepro = (f) => f.startsWith(join('dist', 'test', 'repro'));
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
})('dist');
const ordered = (xs) => xs.sort((a, b) => a.localeCompare(b));
// Unit tests first, two files at a time (they are pure, or start one process of their
// own at most); then the lab's integration tests one file at a time (the Docker lab's
// image build, the starved-machine test and the rate sweep would disturb a neighbour);
// then the reproduction suite two files at a time: one scaled catalogue run uses about a
// third of a core (20 s of CPU in a 62 s retry-storm run), so two side by side stay valid
// on 2 cores (measured: 22 of 22 valid, 11.3 min instead of 22). A run that is disturbed
// anyway is not misread: it comes out invalid (DESIGN.md §2) and its test fails.
const stages = [
  { files: reproOnly ? [] : ordered(files.filter((f) => !isLab(f))), concurrency: 2 },
  {
    files: reproOnly || unitOnly ? [] : ordered(files.filter((f) => isLab(f) && !isRepro(f))),
    concurrency: 1,
  },
  { files: unitOnly ? [] : ordered(files.filter(isRepro)), concurrency: 2 },
].filter((s) => s.files.length > 0);
if (stages.length === 0) {
  console.error('no test files found under dist/ (did the build run?)');
  process.exit(1);
}
const stateDir = mkdtempSync(join(tmpdir(), 'metabench-state-'));
let status = 0;
for (const stage of stages) {
  const r = spawnSync(
    process.execPath,
    ['--test', `--test-concurrency=${stage.concurrency}`, '--test-reporter=spec', ...stage.files],
    // A fresh state folder: no calibration stored on this machine reaches a test (each
    // test also makes its own: test/helpers/state.ts, test/helpers/cli.ts).
    { stdio: 'inherit', env: { ...process.env, METABENCH_STATE_DIR: stateDir } },
  );
  status ||= r.status ?? 1;
}
process.exit(status);
