#!/usr/bin/env node
// Runs the compiled tests with node's test runner, serially (lab tests share 2 cores
// and must not compete with each other for them).
//   node test/run.js           every test
//   node test/run.js --unit    only the fast, pure ones (no lab processes)
//   node test/run.js --repro   only the reproduction suite (test/repro: each catalogue
//                              experiment, scaled, asserting its qualitative outcome)
import { readdirSync, statSync } from 'node:fs';
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
const picked = files
  .filter((f) => (reproOnly ? isRepro(f) : !unitOnly || !isLab(f)))
  // unit tests first, then the lab's integration tests, then the reproduction suite
  .sort(
    (a, b) =>
      Number(isLab(a)) + Number(isRepro(a)) - Number(isLab(b)) - Number(isRepro(b)) || a.localeCompare(b),
  );
if (picked.length === 0) {
  console.error('no test files found under dist/ (did the build run?)');
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-reporter=spec', ...picked], {
  stdio: 'inherit',
});
process.exit(r.status ?? 1);
