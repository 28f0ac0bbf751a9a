/**
 * Simulator benchmark (npm run bench:sim): how fast `--runtime sim` runs a 10-minute
 * experiment at 1,000 origin requests per second with immediate retries (4 attempts,
 * 500 ms timeout) and a 10 s pause of the api, on one core. Goal: under 0.6 s of wall
 * time (at least 1,000× real time), memory bounded. Each scenario runs in a child
 * process pinned to CPU 0 (taskset) so its wall time, CPU time and peak RSS are its own:
 *
 *   storm-recovers  100 workers × 20 ms (5,000/s): the pause's retry storm is below
 *                   cμ/m and drains; retries happen, then stop
 *   collapse        25 workers × 20 ms (1,250/s): 1,000/s is inside the bistable range,
 *                   the pause collapses it for good; the api's FIFO queue grows without
 *                   bound, as the real api's would (memory grows with it)
 *   collapse-bounded the same with queueLimit 2000: the collapse sheds, memory stays flat
 *   storm-recovers (results folder): the first scenario through `metabench run`'s own
 *                   runOnce, writing events.ndjson, timeseries.csv and summary.json
 *
 * Each scenario runs twice: on the child's main thread (Node's default young generation: how
 * every simulation ran before 2026-12-02's change) and on a worker thread whose young generation
 * is SIMULATION_YOUNG_GENERATION_MB, as `metabench run --runtime sim`, model maps and sweep
 * points now run (orchestrator/run/onThread.ts, foundation/workers.ts). The goals are judged on
 * the second.
 *
 * It prints figures (and writes them to benchmarks/results/sim-<date>.md); it asserts nothing.
 * `--seconds N` shortens the experiments (default 600); `--repeat N` runs each scenario N
 * times (default 3) and reports the fastest and the median, since other processes on the
 * machine slow a run down, never speed it up.
 */
import { spawnSync } from 'node:child_process';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { parseExperiment } from '../orchestrator/spec/load.js';
import { planRun } from '../orchestrator/spec/plan.js';
import { runOnce } from '../orchestrator/run/runOnce.js';
import { StatusLine } from '../orchestrator/run/status.js';
import { simulate } from '../orchestrator/model/simulate.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import { loadNow, writeGoals } from './goals.js';
import { SIMULATION_THREAD_LIMITS } from '../foundation/workers.js';

registerRuntimes();

const RESULTS = fileURLToPath(new URL('../../benchmarks/results/', import.meta.url));
const SELF = fileURLToPath(import.meta.url);
const argSeconds = process.argv.indexOf('--seconds');
// A simulation thread is told its scenario and length by its parent (workerData).
const onThread = isMainThread ? undefined : (workerData as { name: Scenario; seconds: number });
const SECONDS = onThread ? onThread.seconds : argSeconds > 0 ? Number(process.argv[argSeconds + 1]) : 600;
const argRepeat = process.argv.indexOf('--repeat');
const REPEAT = argRepeat > 0 ? Number(process.argv[argRepeat + 1]) : 3;

const SCENARIOS = {
  'storm-recovers': { workers: 100, queueLimit: undefined, folder: false },
  collapse: { workers: 25, queueLimit: undefined, folder: false },
  'collapse-bounded': { workers: 25, queueLimit: 2000, folder: false },
  'storm-recovers (results folder)': { workers: 100, queueLimit: undefined, folder: true },
} as const;
type Scenario = keyof typeof SCENARIOS;

function experiment(s: (typeof SCENARIOS)[Scenario], seconds: number): string {
  // 60 s warm-up and baseline, the pause, the rest observed: `seconds` in all.
  const observe = seconds - 70;
  return `
name: sim-bench
lab:
  api: { workers: ${s.workers}, work: { dist: exponential, mean: 20ms }${s.queueLimit ? `, queueLimit: ${s.queueLimit}` : ''} }
load: { arrival: poisson, rate: 1000/s }
client: { timeout: 500ms, retry: { policy: immediate, maxAttempts: 4 } }
schedule:
  warmup: 10s
  baseline: 50s
  trigger: { kind: pause, target: api, duration: 10s }
  observe: ${observe}s
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 10s }
seed: 42
`;
}

interface Measured {
  scenario: string;
  simulatedS: number;
  wallS: number;
  cpuS: number;
  events: number;
  origins: number;
  attempts: number;
  maxRssMb: number;
  verdict: string;
}

/** One scenario, in this process (the child). */
async function measure(name: Scenario): Promise<Measured> {
  const s = SCENARIOS[name];
  const plan = planRun(parseExperiment(experiment(s, SECONDS), 'inline.yaml'), { scale: 1, run: 1 });
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let summary;
  let events: number;
  if (s.folder) {
    const dir = mkdtempSync(join(tmpdir(), 'metabench-simbench-'));
    try {
      summary = await runOnce(plan, dir, {
        journal: { record: () => undefined, clear: () => undefined },
        status: new StatusLine(process.stderr, true),
        stop: new AbortController().signal,
        runtime: 'sim',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    events = -1;
  } else {
    const r = await simulate(plan);
    summary = r.summary;
    events = r.clock.fired;
  }
  const wallS = (performance.now() - t0) / 1000;
  const c = process.cpuUsage(c0);
  return {
    scenario: name,
    simulatedS: plan.totalMs / 1000,
    wallS,
    cpuS: (c.user + c.system) / 1e6,
    events,
    origins: summary.offered,
    attempts: summary.attempts,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
    verdict: summary.recovered ? `${summary.outcome} in ${summary.recoveryTimeS} s` : summary.outcome,
  };
}

const THREADS = ['main thread', 'simulation thread'] as const;
type Thread = (typeof THREADS)[number];

if (!isMainThread) {
  // A simulation thread of the child: the scenario its parent names, measured here.
  parentPort!.postMessage(await measure(onThread!.name));
} else if (process.argv.includes('--child')) {
  const name = process.argv[process.argv.indexOf('--child') + 1] as Scenario;
  let m: Measured;
  if (process.argv.includes('--on-simulation-thread')) {
    const w = new Worker(new URL(import.meta.url), {
      workerData: { name, seconds: SECONDS },
      resourceLimits: SIMULATION_THREAD_LIMITS,
    });
    [m] = (await once(w, 'message')) as [Measured];
    await w.terminate();
  } else m = await measure(name);
  process.stdout.write(JSON.stringify(m) + '\n');
} else {
  const out: string[] = [];
  const say = (line: string): void => {
    out.push(line);
    process.stdout.write(line + '\n');
  };
  const machine = describeMachine();
  const loadBefore = loadNow();
  const date = new Date().toISOString();
  const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;
  say(`# Simulator benchmark, ${date.slice(0, 10)}`);
  say('');
  say(
    `Machine: ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load average before: ${loadBefore.join(' ')}.`,
  );
  say(
    `Each scenario in its own process${hasTaskset ? ', pinned to CPU 0 (taskset -c 0)' : ''}: a ${SECONDS} s experiment at 1,000 origins/s, immediate retries (4 attempts, 500 ms timeout), a 10 s pause of the api after 60 s. Wall and CPU time are the simulation's own (from the plan to the summary; module loading excluded).`,
  );
  say('');
  say(
    `Best of ${REPEAT} runs each (median in brackets). Events are the simulation's timer events (arrivals, work done, timeouts, ...).`,
  );
  say('');
  say(
    '| scenario | thread | simulated | wall | speed-up | CPU | events | events/s | origins | attempts | peak RSS | verdict |',
  );
  say('|---|---|---|---|---|---|---|---|---|---|---|---|');
  const best: Partial<Record<Scenario, { speedUp: number; rssMb: number }>> = {};
  for (const [name, thread] of (Object.keys(SCENARIOS) as Scenario[]).flatMap((n) =>
    THREADS.map((t): [Scenario, Thread] => [n, t]),
  )) {
    const args = [
      SELF,
      '--child',
      name,
      '--seconds',
      String(SECONDS),
      ...(thread === 'simulation thread' ? ['--on-simulation-thread'] : []),
    ];
    const runs: Measured[] = [];
    let failed = '';
    for (let i = 0; i < REPEAT && !failed; i++) {
      const r = hasTaskset
        ? spawnSync('taskset', ['-c', '0', process.execPath, ...args], {
            encoding: 'utf8',
            maxBuffer: 1 << 20,
          })
        : spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
      if (r.status !== 0) failed = (r.stderr ?? '').trim().split('\n').pop() ?? 'failed';
      else runs.push(JSON.parse(r.stdout.trim().split('\n').pop()!) as Measured);
    }
    if (failed) {
      say(`| ${name} | ${thread} | failed: ${failed} |`);
      continue;
    }
    runs.sort((x, y) => x.wallS - y.wallS);
    const m = runs[0]!;
    const med = runs[Math.floor(runs.length / 2)]!;
    if (thread === 'simulation thread')
      best[name] = { speedUp: m.simulatedS / m.wallS, rssMb: Math.max(...runs.map((x) => x.maxRssMb)) };
    say(
      `| ${m.scenario} | ${thread} | ${m.simulatedS} s | ${m.wallS.toFixed(2)} s (${med.wallS.toFixed(2)}) | ${Math.round(m.simulatedS / m.wallS)}× (${Math.round(med.simulatedS / med.wallS)}×) | ${m.cpuS.toFixed(2)} s (${med.cpuS.toFixed(2)}) | ${m.events < 0 ? '–' : m.events} | ${m.events < 0 ? '–' : Math.round(m.events / m.wallS)} | ${m.origins} | ${m.attempts} | ${Math.round(Math.max(...runs.map((x) => x.maxRssMb)))} MB | ${m.verdict} |`,
    );
  }
  say('');
  say(
    `Goal: a 600 s experiment in under 0.6 s of wall time on one core (≥ 1,000× real time), memory bounded.`,
  );
  // Issue 23 point 2's goals. "Memory bounded": the collapse with its unbounded queue
  // peaks within a quarter of the same collapse with a bounded queue (which holds at most
  // 2,000 requests however long it runs).
  const run = best['storm-recovers (results folder)'];
  const collapse = best.collapse;
  const bounded = best['collapse-bounded'];
  writeGoals('sim', loadBefore, [
    {
      figure: `simulator: ${SECONDS} s experiment that recovers, through \`metabench run\`, one core`,
      measured: run ? `${Math.round(run.speedUp)}× real time` : 'failed',
      goal: '>= 1,000× (0.6 s for 600 s)',
      met: run ? run.speedUp >= 1000 : false,
    },
    {
      figure: `simulator: the same experiment collapsed (unbounded queue)`,
      measured: collapse ? `${Math.round(collapse.speedUp)}× real time` : 'failed',
      goal: '>= 200×',
      met: collapse ? collapse.speedUp >= 200 : false,
    },
    {
      figure: 'simulator: peak RSS of the collapse, unbounded queue against bounded',
      measured:
        collapse && bounded
          ? `${Math.round(collapse.rssMb)} MB against ${Math.round(bounded.rssMb)} MB`
          : 'failed',
      goal: 'bounded (within 1.25× of the bounded queue’s)',
      met: collapse && bounded ? collapse.rssMb <= 1.25 * bounded.rssMb : false,
    },
  ]);
  mkdirSync(RESULTS, { recursive: true });
  const file = `${RESULTS}sim-${date.slice(0, 10)}${SECONDS !== 600 ? `-${SECONDS}s` : ''}.md`;
  writeFileSync(file, out.join('\n') + '\n');
  process.stdout.write(`\nwritten to ${file}\n`);
}
