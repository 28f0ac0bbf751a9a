/**
 * Every core for independent simulations (npm run bench:jobs): `metabench model` on
 * retry-storm's default map (7 loads × 4 trigger durations, 28 simulated runs) with
 * --jobs 1 and --jobs <cores>, each through the CLI in a process of its own, and whether the
 * two maps are the same (map.csv byte for byte). It prints figures; it asserts nothing.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { loadNow, writeGoals } from './goals.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'dist', 'orchestrator', 'cli', 'main.js');
const RESULTS = join(REPO, 'benchmarks', 'results');
const cores = availableParallelism();

function model(jobs: number, out: string): { wallS: number; cpuS: number } {
  const t0 = performance.now();
  const r = spawnSync(
    'bash',
    [
      '-c',
      `TIMEFORMAT=%U+%S; { time "$0" "$@" >/dev/null 2>/dev/null; } 2>&1`,
      process.execPath,
      CLI,
      'model',
      join(REPO, 'experiments', 'retry-storm.yaml'),
      '--jobs',
      String(jobs),
      '--out',
      out,
    ],
    { encoding: 'utf8' },
  );
  const wallS = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`metabench model --jobs ${jobs} failed: ${r.stderr}`);
  const [u, s] = r.stdout.trim().split('+').map(Number);
  return { wallS, cpuS: u! + s! };
}

const dir = mkdtempSync(join(tmpdir(), 'metabench-bench-jobs-'));
const out: string[] = [];
const say = (line: string): void => {
  out.push(line);
  process.stdout.write(line + '\n');
};
const machine = describeMachine();
const load = loadNow();
const date = new Date().toISOString();
say(`# Independent simulations on every core, ${date.slice(0, 10)}`);
say('');
say(
  `Machine: ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load average before: ${load.join(' ')}.`,
);
say('');
say('`metabench model experiments/retry-storm.yaml` (its default map: 28 simulated runs), through the CLI.');
say('');
say('| --jobs | wall | CPU (user + system) | speed-up |');
say('|---|---|---|---|');
const serial = model(1, join(dir, 'jobs-1'));
say(`| 1 | ${serial.wallS.toFixed(1)} s | ${serial.cpuS.toFixed(1)} s | 1× |`);
const parallel = model(cores, join(dir, `jobs-${cores}`));
say(
  `| ${cores} | ${parallel.wallS.toFixed(1)} s | ${parallel.cpuS.toFixed(1)} s | ${(serial.wallS / parallel.wallS).toFixed(2)}× |`,
);
const same =
  readFileSync(join(dir, 'jobs-1', 'map.csv'), 'utf8') ===
  readFileSync(join(dir, `jobs-${cores}`, 'map.csv'), 'utf8');
say('');
say(
  `The two maps are ${same ? 'the same (map.csv byte for byte)' : 'DIFFERENT'}. Goal: every core used, results identical to serial.`,
);
// Issue 23 point 3: every core used, results identical to serial.
const speedUp = serial.wallS / parallel.wallS;
writeGoals('jobs', load, [
  {
    figure: `28-point model map, --jobs ${cores} against --jobs 1`,
    measured: `${speedUp.toFixed(2)}× faster`,
    goal: `every core used (>= ${(0.75 * cores).toFixed(1)}× on ${cores} cores)`,
    met: speedUp >= 0.75 * cores,
  },
  {
    figure: 'the map with --jobs N and with --jobs 1',
    measured: same ? 'identical (map.csv byte for byte)' : 'different',
    goal: 'identical',
    met: same,
  },
]);
rmSync(dir, { recursive: true, force: true });
mkdirSync(RESULTS, { recursive: true });
const file = join(RESULTS, `jobs-${date.slice(0, 10)}.md`);
writeFileSync(file, out.join('\n') + '\n');
process.stdout.write(`\nwritten to ${file}\n`);
