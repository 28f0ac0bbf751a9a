#!/usr/bin/env node
// Runs the compiled tests with node's test runner.
//   node test/run.js           the unit tests, then the lab's integration tests (npm test),
//                              but for the Docker engine's (DOCKER below)
//   node test/run.js --unit    only the fast, pure ones (no lab processes)
//   node test/run.js --docker  only the Docker engine's end-to-end tests (npm run test:docker)
//   node test/run.js --long    only the long lab integration files (LONG_LAB below; npm run test:long)
//   node test/run.js --repro   only the reproduction suite (test/repro: each catalogue
//                              experiment, scaled, asserting its claimed outcome)
//   node test/run.js --repro-ci  the reproduction suite's CI share (CI_SHARE below; .ci/run)
//   node test/run.js --all     all four
//   node test/run.js --lab     the integration tests (the Docker engine's too) and the reproduction suite
//   add --list to print the files selected, in their order, without running them
// The reproduction suite is its own command because its time is the experiments' own:
// about 30 runs of 35-120 s each, one after another (lab runs disturb each other; see
// below), which no test runner setting shortens. Whole, it takes about 30 minutes on 2
// cores, more than CI's budget leaves after the lint and `npm test`; so CI runs a share of
// it that still covers each amplifier of the catalogue once, and the whole suite runs
// before a submission (`npm run test:repro`).
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';

const unitOnly = process.argv.includes('--unit');
const reproShare = process.argv.includes('--repro-ci');
const reproOnly = process.argv.includes('--repro') || reproShare;
const labOnly = process.argv.includes('--lab');
const dockerOnly = process.argv.includes('--docker');
const longOnly = process.argv.includes('--long');
const all = process.argv.includes('--all');
const withRepro = reproOnly || labOnly || all;
const withDocker = dockerOnly || labOnly || all;
const withLong = longOnly || labOnly || all;
const isIntegration = (f) => f.startsWith(join('dist', 'test', 'integration'));
const isRepro = (f) => f.startsWith(join('dist', 'test', 'repro'));
const isLab = (f) => isIntegration(f) || isRepro(f);
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.js')) files.push(p);
  }
})('dist');
const byName = (a, b) => a.localeCompare(b);

// How many reproduction files run side by side (METABENCH_TEST_JOBS overrides; see below).
const LAB_JOBS = Number(process.env.METABENCH_TEST_JOBS ?? 1);
if (!(Number.isInteger(LAB_JOBS) && LAB_JOBS >= 1)) {
  console.error(
    `METABENCH_TEST_JOBS must be a whole number of at least 1 (got "${process.env.METABENCH_TEST_JOBS}")`,
  );
  process.exit(2);
}

// Reproduction files of over two minutes, started first (with METABENCH_TEST_JOBS=2, none
// is left running alone at the end).
const LONG = [
  'catalogue-other',
  'replicas',
  'catalogue-queues',
  'catalogue-data',
  'policies',
  'llm-platform',
  'loss',
  'cache-stampede',
  'retry-storm',
  'real-servers',
  'error-path-mitigated',
  'cache-stampede-mitigated',
  'slowdown',
];
const stem = (f) => f.replace(/^.*[/\\]/, '').replace(/\.test\.js$/, '');

// The reproduction files CI runs (--repro-ci): the spine (retries, retry-storm), the cold
// cache (cache-stampede) and a real server (real-server-ci). Since each experiment runs
// at its smallest accepted scale (0.34 to 0.8, not 0.2 as before: issue 32), the client
// policies' file (budget at 0.34, backoff 0.8, breaker 0.5, hedging 0.65: about 10 minutes
// from their schedules) left CI's share too; `npm test` still checks their claimed outcomes in
// simulation (sim/catalogueScale.test.ts) and each policy's logic (bench/policy), and the
// whole suite on the lab. The rest
// (queues and load shapes, the data services' faults, the step test, the soak, oscillation,
// the LLM platform, and replication with load balancing, whose 4 minutes put CI's whole run
// past its 45: 46 minutes on 2026-12-02) runs in the whole suite. `npm test` still runs a two-replica
// local lab (test/integration/replicas.test.ts) and the balancers in simulation (sim/replicas.test.ts).
// Issue 34: one row on a real server, the retry storm on PHP-FPM behind nginx
// (real-server-ci: about 2 minutes at its smallest accepted scale, 0.41); the other real-server
// rows (real-servers: gunicorn's, the no-retry twins and the JVM's GC pair, about 11.5 minutes)
// run in the whole suite.
// The cold cache's and the error path's mitigated twins (cache-stampede-mitigated,
// error-path-mitigated: 4.5 minutes) left the share when CI's whole run reached 49 minutes
// (2957 s, 2026-12-06): the share keeps the spine's pair (retry-storm and its no-retry twin)
// and each amplifier's metastable row; `npm test` still checks the mitigations' claimed
// outcomes in simulation (sim/catalogueScale.test.ts), and the whole suite on the lab.
// At 45 minutes the run was still too close (2026-12-07, a fresh clone on this 2-core machine:
// npm test 17.2 min, the share 10.4 of which error-path 151 s and retry-storm's file, with its
// no-retry twin, 218 s; the Docker tests after it): the error path's row and the spine's
// control left the share too. retry-storm-no-retry has its own file since; both claims stay
// checked in simulation by `npm test` (sim/acceptance.test.ts, sim/catalogueScale.test.ts),
// and on the lab by the whole suite.
const CI_SHARE = ['retry-storm', 'cache-stampede', 'real-server-ci'];
const rank = (f) => {
  const i = LONG.indexOf(stem(f));
  return i < 0 ? LONG.length : i;
};

// The end-to-end tests of the Docker and swarm runtimes, and the reference labs' images: about 13
// minutes on 2 cores (16.0 measured at a load average of 9-14, 2.9 of them reference-images; image
// checks, stacks deployed and removed, healthchecks every 10 s, servers measured), which would put `npm test`
// past its 20-minute budget; they need a Docker engine, and are their own command
// (`npm run test:docker`, run by .ci/run after `npm test`). swarm-two-node adds 114 s (2026-12-07:
// a second engine started, joined and loaded in 12 s, the storm, lab down, the engine gone in 3 s).
const DOCKER = [
  'docker-lab',
  'system-compose',
  'lab-conformance-docker',
  'lab-conformance-swarm',
  'reference-images',
  'swarm-lab',
  'ssh-engine',
  'swarm-two-node',
];
const isDocker = (f) => DOCKER.includes(stem(f));

// The local lab's integration files of over about 40 s each (CI, seconds), which together put
// `npm test` past its 20 minutes (26.6 with the system and reference-server tests): their own
// command (`npm run test:long`), run before a submission (`npm run test:all`) but not by CI,
// whose whole run took 59 minutes with them (3537 s, 2026-12-06) against its 45; `npm test`
// keeps a lab run of every kind of thing (a trigger on the real lab in trigger-plugin, crash,
// replicas, the system tests; a run's validity in validity-starved).
const LONG_LAB = [
  'sweep', // 144: a lab sweep of two points, resumed
  'background-load', // 109: retry-storm beside a half-core process
  'server-lab', // 96: each reference server run from an experiment file
  'triggers', // 86: every trigger kind on the real lab
  'sweep-twin', // 65: a lab sweep with its simulated twins
  'pinning', // 49: --pin and --priority on real processes
  'calibrate', // 44: a step test on the real lab
];
const isLong = (f) => LONG_LAB.includes(stem(f));

// Integration files that start no lab in real time (simulated runs, exports, pdflatex,
// Chromium on a fixture, config checks): they run beside the unit tests, two at a time,
// since nothing in them can be disturbed by a neighbour.
const BESIDE_UNIT = [
  // longest first (CI, seconds): none is left running alone at the end
  'first-hour', // 254 at load 14 on 2 cores (about 75 s of CPU: the guide's simulated sweep, the README's run)
  'model-over', // 62
  'model-magnitudes', // simulated maps only (issue 35)
  'export-bundle', // 33
  'sweep-jobs', // 32
  'sweep-rerun', // 25 (simulated sweeps only)
  'export-latex-sweep', // 19
  'sweep-factorial', // 15
  'report-html', // 14
  'model-over-run', // 9 at load 10 (two one-cell maps of the PHP-FPM rows)
  'export-latex', // 8
  'docker-config', // 6
  'entrypoints', // 4
  'export-grafana', // 2
];

const besideRank = (f) => (isIntegration(f) ? BESIDE_UNIT.indexOf(stem(f)) : BESIDE_UNIT.length);
for (const name of [...DOCKER, ...LONG_LAB, ...BESIDE_UNIT])
  if (!files.some((f) => isIntegration(f) && stem(f) === name)) {
    console.error(`test/run.js names test/integration/${name}.test.ts, which does not exist`);
    process.exit(1);
  }
const unit =
  reproOnly || labOnly || dockerOnly || longOnly
    ? []
    : files
        .filter((f) => !isLab(f) || (!unitOnly && isIntegration(f) && BESIDE_UNIT.includes(stem(f))))
        // the integration files first, longest first: none is left running alone at the end
        .sort((a, b) => besideRank(a) - besideRank(b) || byName(a, b));
const lab = unitOnly
  ? []
  : files.filter((f) =>
      dockerOnly
        ? isIntegration(f) && isDocker(f)
        : longOnly
          ? isIntegration(f) && isLong(f)
          : reproOnly
            ? isRepro(f)
            : (withRepro ? isLab(f) : isIntegration(f)) &&
              (withDocker || !isDocker(f)) &&
              (withLong || !isLong(f)),
    );
const integration = lab.filter((f) => isIntegration(f) && !unit.includes(f)).sort(byName);
const repro = lab
  .filter((f) => isRepro(f) && (!reproShare || CI_SHARE.includes(stem(f))))
  .sort((a, b) => rank(a) - rank(b) || byName(a, b));
if (reproShare && repro.length !== CI_SHARE.length) {
  console.error(`--repro-ci: the CI share names ${CI_SHARE.join(', ')}; found ${repro.map(stem).join(', ')}`);
  process.exit(1);
}
if (unit.length + lab.length === 0) {
  console.error('no test files found under dist/ (did the build run?)');
  process.exit(1);
}
// --list: the files the other flags select, in the order they would run, and nothing run.
if (process.argv.includes('--list')) {
  for (const f of [...unit, ...integration, ...repro]) console.log(f);
  process.exit(0);
}

// A fresh state folder: no calibration stored on this machine reaches a test (each test
// also makes its own: test/helpers/state.ts, test/helpers/cli.ts).
const env = { ...process.env, METABENCH_STATE_DIR: mkdtempSync(join(tmpdir(), 'metabench-state-')) };
const startedAt = Date.now();
const clock = () => `${((Date.now() - startedAt) / 60_000).toFixed(1)} min`;
const results = [];

// Unit tests and the integration files that start no lab: one runner, two files at a time
// (they are pure, or start processes that cannot be disturbed: simulations, exports).
if (unit.length > 0) {
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ['--test', '--test-concurrency=2', '--test-reporter=spec', ...unit], {
    stdio: 'inherit',
    env,
  });
  results.push({
    file: `unit tests (${unit.filter((f) => !isIntegration(f)).length} files) and ${unit.filter(isIntegration).length} integration files beside them`,
    code: r.status ?? 1,
    s: (Date.now() - t0) / 1000,
  });
}

// The lab's tests, a runner per file whose report is printed whole when it ends, one file
// at a time: lab runs disturb each other. Beside one another, timing-sensitive runs came
// out invalid on schedule lag against the 10 ms limit (here: retry-storm 12.8 ms beside a
// 500/s load test, a sweep point 14.9 ms; on CI, two reproduction files side by side:
// lifo-vs-fifo-lifo 12.99 ms, retry-storm 10.27 ms) and hotos21-retry, at 93% of its
// capacity, missed its baseline p99 (611 ms against 300; 154-271 ms alone). A disturbed
// run is not misread (it comes out invalid, DESIGN.md §2, and its test fails), but a suite
// that fails for its own neighbours proves nothing. METABENCH_TEST_JOBS=2 runs the
// reproduction files two at a time anyway, for a quick look on a quiet machine.
// A lab run that comes out invalid (DESIGN.md §2: the generator fell behind its schedule, the
// machine's CPU was short, the rate was off) says the machine disturbed the measurement, not
// that the code is wrong; on 2 shared cores a retry storm's schedule lag p99 sits near its
// 10 ms limit (CI: 10.2 and 10.7 ms in runs that passed before and after). A lab file that
// failed on an invalid run is run once more, and both reports are printed; any other failure,
// or an invalid run twice, fails the suite.
const INVALID_RUN = /\binvalid\b/;

function runOnce(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', file], { env });
    const out = [];
    child.stdout.on('data', (b) => out.push(b));
    child.stderr.on('data', (b) => out.push(b));
    child.on('close', (code, signal) =>
      resolve({ code: code ?? (signal ? 1 : 0), s: (Date.now() - t0) / 1000, out: Buffer.concat(out) }),
    );
  });
}

async function runFile(file) {
  console.log(`▶ ${file} (started at ${clock()})`);
  let r = await runOnce(file);
  let note = '';
  if (r.code !== 0 && INVALID_RUN.test(r.out.toString())) {
    process.stdout.write(
      `\n━━ ${file}: FAILED on an invalid run in ${r.s.toFixed(0)} s; running it once more\n`,
    );
    process.stdout.write(r.out);
    const first = r.s;
    r = await runOnce(file);
    r.s += first;
    note = ' (the second time; the first run was invalid)';
  }
  process.stdout.write(`\n━━ ${file}: ${r.code === 0 ? 'passed' : 'FAILED'}${note} in ${r.s.toFixed(0)} s\n`);
  process.stdout.write(r.out);
  results.push({ file, code: r.code, s: r.s, note });
}

async function pool(queue, width) {
  const next = async () => {
    for (let f = queue.shift(); f !== undefined; f = queue.shift()) await runFile(f);
  };
  await Promise.all(Array.from({ length: width }, next));
}

await pool([...integration], 1);
await pool([...repro], LAB_JOBS);

console.log(`\n━━ ${results.length} runs in ${clock()}`);
for (const r of results)
  console.log(`${r.code === 0 ? '✔' : '✖'} ${r.file}  ${r.s.toFixed(0)} s${r.note ?? ''}`);
process.exit(results.some((r) => r.code !== 0) ? 1 : 0);
