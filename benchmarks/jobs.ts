/**
 * Every core for independent simulations (npm run bench:jobs), issue 37's goal: with
 * --jobs 2 at least 1.5× faster than --jobs 1, on
 *   - `metabench model experiments/retry-storm.yaml` (its default map: 28 simulated runs);
 *   - `metabench sweep --runtime sim` of a 20-point sweep: retry-storm's load.rate at its
 *     own 70% of capacity and 19 more values from 20% to 92% (one at a time).
 * Each through the CLI as a whole process under /usr/bin/time, and whether the two
 * results are the same (map.csv, sweep.csv byte for byte). Beside each speed-up, what
 * bounds it: the CPU the two runs used (the same work should cost the same), the core
 * time it left (cores × wall − CPU: idle, or other work's), and the serial part: the start-up before the first
 * run began and the writing after the last one ended (from the runs' manifests and
 * summaries), with `metabench --version` alone as the cost of loading the CLI.
 * (`metabench model` writes neither per run: "–".) It asserts nothing. `--scale F` scales the sweep's experiment (default 1).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { loadNow, writeGoals, type Goal } from './goals.js';
import { timed, type ProcessCost } from './simRun.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const CLI = join(REPO, 'dist', 'orchestrator', 'cli', 'main.js');
const RESULTS = join(REPO, 'benchmarks', 'results');
const cores = availableParallelism();
const secs = (x: number): string => (Number.isFinite(x) ? `${x.toFixed(1)} s` : '–');
const argScale = process.argv.indexOf('--scale');
const SCALE = argScale > 0 ? Number(process.argv[argScale + 1]) : 1;

interface Measured extends ProcessCost {
  /** Seconds from the command's start to the first run's start, and from the last run's end to the command's. */
  readonly startUpS: number;
  readonly writingS: number;
}

/** Every file named `name` under `dir`. */
function filesNamed(dir: string, name: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((p) => p === name || p.endsWith(`/${name}`))
    .map((p) => join(dir, p));
}

function measure(args: readonly string[], out: string): Measured {
  const t0 = Date.now();
  // 11: the sweep finished with invalid runs (each point's report says why); still timed.
  const cost = timed([process.execPath, CLI, ...args, '--out', out, '--quiet'], [0, 11]);
  if (cost.status === 11)
    say(`\`metabench ${args[0]} … ${args.slice(-2).join(' ')}\`: some runs invalid (exit 11).`);
  const t1 = t0 + cost.wallS * 1000;
  const starts = filesNamed(out, 'manifest.json').map(
    (f) => Date.parse((JSON.parse(readFileSync(f, 'utf8')) as { startedAt?: string }).startedAt ?? '') || t1,
  );
  const ends = filesNamed(out, 'summary.json').map((f) => statSync(f).mtimeMs);
  return {
    ...cost,
    startUpS: starts.length ? (Math.min(...starts) - t0) / 1000 : NaN,
    writingS: ends.length ? (t1 - Math.max(...ends)) / 1000 : NaN,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'metabench-bench-jobs-'));
const out: string[] = [];
const say = (line = ''): void => {
  out.push(line);
  process.stdout.write(line + '\n');
};
const machine = describeMachine();
const load = loadNow();
const date = new Date().toISOString();
const sweepFile = join(dir, 'rate-20.sweep.yaml');
const rates = Array.from({ length: 19 }, (_, i) => `${20 + 4 * i}% capacity`);
writeFileSync(
  sweepFile,
  `name: bench-rate-20
experiment: ${join(REPO, 'experiments', 'retry-storm.yaml')}
design: one-at-a-time
factors:
  - { path: load.rate, values: [${rates.join(', ')}] }
repeat: 1
runtime: sim
`,
);
const WORKLOADS = [
  {
    name: '28-cell model map',
    command: '`metabench model experiments/retry-storm.yaml --jobs N`',
    args: ['model', join(REPO, 'experiments', 'retry-storm.yaml')],
    result: 'map.csv',
    runs: 28,
  },
  {
    name: '20-point simulated sweep',
    command: `\`metabench sweep rate-20.sweep.yaml --runtime sim --jobs N${SCALE !== 1 ? ` --scale ${SCALE} --any-scale` : ''}\` (retry-storm's load.rate: ${rates.join(', ').replace(/ capacity/g, '')} and the file's 70%, of capacity)`,
    args: [
      'sweep',
      sweepFile,
      '--runtime',
      'sim',
      ...(SCALE !== 1 ? ['--scale', String(SCALE), '--any-scale'] : []),
    ],
    result: 'sweep.csv',
    runs: 20,
  },
] as const;

say(`# Independent simulations on every core, ${date.slice(0, 10)}`);
say();
say(
  `Machine: ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load average before: ${load.join(' ')}.`,
);
const version = timed([process.execPath, CLI, '--version']);
say();
say(
  `Loading the CLI alone (\`metabench --version\`): ${version.wallS.toFixed(2)} s wall, ${version.cpuS.toFixed(2)} CPU-s. Each command below is a whole process under /usr/bin/time; "start-up" is from its start to its first run's, "writing" from its last run's summary to its end; "core-s it left" is ${cores} cores × wall − its CPU (idle, or used by other work on the machine).`,
);
const goals: Goal[] = [];
for (const w of WORKLOADS) {
  say();
  say(`## ${w.name}`);
  say();
  say(`${w.command}.`);
  say();
  say(
    '| --jobs | wall | CPU | CPU per run | core-s it left (idle or to other work) | start-up | writing | speed-up |',
  );
  say('|---|---|---|---|---|---|---|---|');
  const measured = [1, cores].map((jobs) => {
    const m = measure([...w.args, '--jobs', String(jobs)], join(dir, `${w.result}-${jobs}`));
    say(
      `| ${jobs} | ${m.wallS.toFixed(1)} s | ${m.cpuS.toFixed(1)} s | ${(m.cpuS / w.runs).toFixed(2)} s | ${(cores * m.wallS - m.cpuS).toFixed(1)} | ${secs(m.startUpS)} | ${secs(m.writingS)} | |`,
    );
    return m;
  });
  const [serial, parallel] = measured as [Measured, Measured];
  const speedUp = serial.wallS / parallel.wallS;
  say(`| | | | | | | | ${speedUp.toFixed(2)}× |`);
  const same =
    readFileSync(join(dir, `${w.result}-1`, w.result), 'utf8') ===
    readFileSync(join(dir, `${w.result}-${cores}`, w.result), 'utf8');
  say();
  say(`The two results are ${same ? `the same (${w.result} byte for byte)` : 'DIFFERENT'}.`);
  goals.push(
    {
      figure: `${w.name}, --jobs ${cores} against --jobs 1 (wall)`,
      measured: `${speedUp.toFixed(2)}× faster (CPU ${serial.cpuS.toFixed(1)} s against ${parallel.cpuS.toFixed(1)} s; serial part ${secs(parallel.startUpS + parallel.writingS)} of ${parallel.wallS.toFixed(1)} s)`,
      goal: '>= 1.5×',
      met: speedUp >= 1.5,
    },
    {
      figure: `${w.name} with --jobs ${cores} and with --jobs 1`,
      measured: same ? `identical (${w.result} byte for byte)` : 'different',
      goal: 'identical',
      met: same,
    },
  );
}
say();
say(
  'Where a speed-up falls short: with the same CPU on both sides, the time --jobs N did not save is the idle core time; start-up and writing run on one core whatever --jobs says (Amdahl), and other work on the machine takes cores from both runs.',
);
writeGoals('jobs', load, goals);
rmSync(dir, { recursive: true, force: true });
mkdirSync(RESULTS, { recursive: true });
const file = join(RESULTS, `jobs-${date.slice(0, 10)}${SCALE !== 1 ? `-scale${SCALE}` : ''}.md`);
writeFileSync(file, out.join('\n') + '\n');
process.stdout.write(`\nwritten to ${file}\n`);
