/**
 * Simulator benchmark (npm run bench:sim), issue 37's goals: a 610 s experiment at 1,000
 * origins/s (c workers × 20 ms exponential, 500 ms timeout, immediate retries up to 4
 * attempts, a 10 s pause of the api after 90 s, seed 42) through `metabench run --runtime
 * sim` as a whole process (spawned under /usr/bin/time: wall, CPU, peak RSS of everything
 * the command does), beside the bare-bones reference simulation of the same queue
 * (referenceSim.ts, in a process of its own):
 *
 *   recovering  100 workers (5,000/s): the pause's retries drain, goal >= 1,000× real time
 *   collapsed    25 workers (1,250/s): 4 × 1,000/s of attempts keep the FIFO queue growing
 *                for good, goal >= 200×; run at 310 s and 610 s, its peak RSS must not grow
 *                with the backlog (610 s within 10% of 310 s)
 *   ours within 2× of the reference's CPU on each.
 *
 * `metabench run` writes every event by default; a sweep writes failures only, a model map
 * none: each scenario runs with the default, with `--events none`, and with `--events none
 * --report none` (summaries and records only, the report written later if wanted). Where a speed goal
 * is missed, the scenario runs once more under --cpu-prof and the results file shows
 * where its time went. It asserts nothing. `--seconds N` shortens the 610 s runs (the
 * collapse's shorter run is about half); `--repeat N` runs each N times (default 3) and
 * keeps the fastest (other work on the machine slows a run, never speeds it up).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { loadNow, writeGoals, type Goal } from './goals.js';
import { referenceSim } from './referenceSim.js';
import { selfTime } from './cpuProfile.js';
import {
  experimentYaml,
  referenceQueue,
  runSim,
  timed,
  totalS,
  type ProcessCost,
  type QueueScenario,
  type SimRunSummary,
} from './simRun.js';

const RESULTS = fileURLToPath(new URL('../../benchmarks/results/', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};

/** 30 s warm-up, 60 s baseline, the 10 s pause, the rest observed: `seconds` in all. */
const scenario = (workers: number, seconds: number): QueueScenario => ({
  workers,
  warmupS: 30,
  baselineS: 60,
  observeS: seconds - 100,
});

if (process.argv.includes('--reference')) {
  // A child: the reference simulation alone, its own loop's CPU beside the process's.
  const s = scenario(arg('--workers', 100), arg('--seconds', 610));
  const c0 = process.cpuUsage();
  const r = referenceSim(referenceQueue(s));
  const c = process.cpuUsage(c0);
  process.stdout.write(
    JSON.stringify({
      loopCpuS: (c.user + c.system) / 1e6,
      events: r.events,
      origins: r.origins,
      attempts: r.attempts,
    }) + '\n',
  );
  process.exit(0);
}

const SECONDS = arg('--seconds', 610);
const REPEAT = arg('--repeat', 3);
// The default writes the report and every event; a model map's cell writes neither.
const FLAGS: Record<string, readonly string[]> = {
  default: [],
  '--events none': ['--events', 'none'],
  '--events none --report none': ['--events', 'none', '--report', 'none'],
};

interface Row extends ProcessCost {
  readonly summary: SimRunSummary;
  readonly simulatedS: number;
}

/** The fastest of REPEAT runs, and the largest peak RSS of them. */
function best(run: () => ProcessCost & { summary: SimRunSummary }, simulatedS: number): Row {
  const runs = Array.from({ length: REPEAT }, run).sort((a, b) => a.wallS - b.wallS);
  return { ...runs[0]!, maxRssMb: Math.max(...runs.map((r) => r.maxRssMb)), simulatedS };
}

const out: string[] = [];
const say = (line = ''): void => {
  out.push(line);
  process.stdout.write(line + '\n');
};
const machine = describeMachine();
const loadBefore = loadNow();
const date = new Date().toISOString();
const recovering = scenario(100, SECONDS);
const collapsed = scenario(25, SECONDS);
const collapsedShort = scenario(25, Math.max(110, Math.round(SECONDS / 2)));
say(`# Simulator benchmark, ${date.slice(0, 10)}`);
say();
say(
  `Machine: ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load average before: ${loadBefore.join(' ')}. Not pinned: \`metabench run\` simulates on a thread of its own beside its main thread.`,
);
say();
say('The experiment (recovering; the collapse has `workers: 25`, the shorter collapse a shorter `observe`):');
say();
for (const line of ['```yaml', ...experimentYaml(recovering).trimEnd().split('\n'), '```']) say(line);
say();
say(
  `Command: \`metabench run FILE --runtime sim --out DIR --quiet [flags]\`, a whole process under /usr/bin/time (module loading, simulation, results folder). Fastest of ${REPEAT} (peak RSS: the largest).`,
);
say();
say(
  '| scenario | flags | simulated | wall | × real time | CPU | × per CPU-s | peak RSS | origins | attempts | verdict |',
);
say('|---|---|---|---|---|---|---|---|---|---|---|');
const rows = new Map<string, Row>();
for (const [name, s] of [
  ['recovering', recovering],
  ['collapsed', collapsed],
  ['collapsed (shorter)', collapsedShort],
] as const)
  for (const [label, flags] of Object.entries(FLAGS)) {
    const r = best(() => runSim(s, flags), totalS(s));
    rows.set(`${name} ${label}`, r);
    const v = r.summary.recovered
      ? `${r.summary.outcome} in ${r.summary.recoveryTimeS} s`
      : r.summary.outcome;
    say(
      `| ${name} | ${label} | ${r.simulatedS} s | ${r.wallS.toFixed(2)} s | ${Math.round(r.simulatedS / r.wallS)}× | ${r.cpuS.toFixed(2)} s | ${Math.round(r.simulatedS / r.cpuS)}× | ${Math.round(r.maxRssMb)} MB | ${r.summary.offered} | ${r.summary.attempts} | ${v} |`,
    );
  }
say();
say(
  `The reference simulation (benchmarks/referenceSim.ts: the same queue, counts only), \`node dist/benchmarks/sim.js --reference --workers C --seconds S\`, a whole process; its loop's own CPU beside. Fastest of ${REPEAT}.`,
);
say();
say(
  '| scenario | simulated | wall | CPU (process) | CPU (loop) | × per CPU-s | events | origins | attempts | peak RSS |',
);
say('|---|---|---|---|---|---|---|---|---|---|');
const reference = new Map<string, ProcessCost & { loopCpuS: number }>();
for (const [name, s] of [
  ['recovering', recovering],
  ['collapsed', collapsed],
] as const) {
  const runs = Array.from({ length: REPEAT }, () => {
    const r = timed([
      process.execPath,
      SELF,
      '--reference',
      '--workers',
      String(s.workers),
      '--seconds',
      String(totalS(s)),
    ]);
    return {
      ...r,
      ...(JSON.parse(r.stdout) as { loopCpuS: number; events: number; origins: number; attempts: number }),
    };
  }).sort((a, b) => a.cpuS - b.cpuS);
  const r = runs[0]!;
  reference.set(name, r);
  say(
    `| ${name} | ${totalS(s)} s | ${r.wallS.toFixed(2)} s | ${r.cpuS.toFixed(2)} s | ${r.loopCpuS.toFixed(2)} s | ${Math.round(totalS(s) / r.cpuS)}× | ${r.events} | ${r.origins} | ${r.attempts} | ${Math.round(r.maxRssMb)} MB |`,
  );
}

const goals: Goal[] = [];
const speedGoal = (name: string, label: string, goal: number): boolean => {
  const r = rows.get(`${name} ${label}`)!;
  const x = r.simulatedS / r.wallS;
  goals.push({
    figure: `simulator: ${r.simulatedS} s at 1,000 origins/s ${name}, \`metabench run --runtime sim\`${label === 'default' ? '' : ` ${label}`}, whole process`,
    measured: `${Math.round(x)}× real time (${r.wallS.toFixed(2)} s wall, ${r.cpuS.toFixed(2)} CPU-s)`,
    goal: `>= ${goal.toLocaleString('en')}×`,
    met: x >= goal,
  });
  return x >= goal;
};
const missed = new Set<string>();
for (const label of Object.keys(FLAGS)) {
  if (!speedGoal('recovering', label, 1000)) missed.add('recovering');
  if (!speedGoal('collapsed', label, 200)) missed.add('collapsed');
}
for (const name of ['recovering', 'collapsed'])
  for (const label of Object.keys(FLAGS)) {
    const ours = rows.get(`${name} ${label}`)!;
    const ref = reference.get(name)!;
    goals.push({
      figure: `simulator against the reference simulation, ${name}${label === 'default' ? '' : ` (${label})`}: CPU, whole processes`,
      measured: `${(ours.cpuS / ref.cpuS).toFixed(1)}× (${ours.cpuS.toFixed(2)} against ${ref.cpuS.toFixed(2)} CPU-s)`,
      goal: '<= 2×',
      met: ours.cpuS <= 2 * ref.cpuS,
    });
  }
for (const label of Object.keys(FLAGS)) {
  const long = rows.get(`collapsed ${label}`)!;
  const short = rows.get(`collapsed (shorter) ${label}`)!;
  goals.push({
    figure: `simulator: collapsed peak RSS at ${long.simulatedS} s against ${short.simulatedS} s${label === 'default' ? '' : ` (${label})`} (the backlog grows with the length)`,
    measured: `${Math.round(long.maxRssMb)} MB against ${Math.round(short.maxRssMb)} MB (${(((long.maxRssMb - short.maxRssMb) / short.maxRssMb) * 100).toFixed(0)}%)`,
    goal: 'bounded: within 10%',
    met: long.maxRssMb <= 1.1 * short.maxRssMb,
  });
}
say();
say('## Goals');
say();
say('| figure | measured | goal | met |');
say('|---|---|---|---|');
for (const g of goals) say(`| ${g.figure} | ${g.measured} | ${g.goal} | ${g.met ? 'met' : '**not met**'} |`);

// A missed speed goal: where the time goes (default flags), every thread's profile.
for (const name of missed) {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-simprof-'));
  try {
    const s = name === 'recovering' ? recovering : collapsed;
    const r = runSim(s, [], ['--cpu-prof', '--cpu-prof-dir', dir]);
    say();
    say(
      `## Where the time goes: ${name}, \`node --cpu-prof\` (${r.wallS.toFixed(2)} s wall, ${r.cpuS.toFixed(2)} CPU-s with the profiler)`,
    );
    const profiles = readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => selfTime(JSON.parse(readFileSync(join(dir, f), 'utf8')) as Parameters<typeof selfTime>[0]))
      .sort((a, b) => b.totalMs - a.totalMs);
    profiles.forEach((p, i) => {
      say();
      say(
        `Profile ${i + 1} of ${profiles.length} (one per thread; ${(p.totalMs / 1000).toFixed(2)} s sampled, idle included), self time by file and by function:`,
      );
      say();
      say('| ms | file | | ms | function |');
      say('|---|---|---|---|---|');
      for (let k = 0; k < Math.max(p.byFile.length, p.byFunction.length); k++) {
        const f = p.byFile[k];
        const fn = p.byFunction[k];
        say(
          `| ${f ? Math.round(f[1]) : ''} | ${f?.[0] ?? ''} | | ${fn ? Math.round(fn[1]) : ''} | ${fn?.[0] ?? ''} |`,
        );
      }
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

writeGoals('sim', loadBefore, goals);
mkdirSync(RESULTS, { recursive: true });
const file = `${RESULTS}sim-${date.slice(0, 10)}${SECONDS !== 610 ? `-${SECONDS}s` : ''}.md`;
writeFileSync(file, out.join('\n') + '\n');
process.stdout.write(`\nwritten to ${file}\n`);
