/**
 * The simulator benchmark's experiment and how it is run: `metabench run --runtime sim`
 * as a whole process under /usr/bin/time (wall, CPU and peak RSS of everything the
 * command does: module loading, the simulation thread, the results folder), and the
 * same queue's parameters for the reference simulation (referenceSim.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReferenceQueue } from './referenceSim.js';
import { ACCEPT_BACKLOG } from '../sim/api.js';

const CLI = fileURLToPath(new URL('../orchestrator/cli/main.js', import.meta.url));

/** The queue of issue 37's goals: 1,000 origins/s, c workers × 20 ms exponential, 500 ms timeout, 4 attempts, a 10 s pause. */
export interface QueueScenario {
  readonly workers: number;
  readonly warmupS: number;
  readonly baselineS: number;
  readonly observeS: number;
}

export const totalS = (s: QueueScenario): number => s.warmupS + s.baselineS + 10 + s.observeS;

export function experimentYaml(s: QueueScenario): string {
  return `name: bench-queue-${s.workers}w-${totalS(s)}s
lab:
  api: { workers: ${s.workers}, work: { dist: exponential, mean: 20ms }, queue: fifo }
load: { arrival: poisson, rate: 1000/s }
client:
  timeout: 500ms
  retry: { policy: immediate, maxAttempts: 4 }
schedule:
  warmup: ${s.warmupS}s
  baseline: ${s.baselineS}s
  trigger: { kind: pause, target: api, duration: 10s }
  observe: ${s.observeS}s
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 10s }
seed: 42
`;
}

export function referenceQueue(s: QueueScenario, seed = 42): ReferenceQueue {
  return {
    ratePerS: 1000,
    workers: s.workers,
    meanWorkMs: 20,
    timeoutMs: 500,
    maxAttempts: 4,
    pauseAtMs: (s.warmupS + s.baselineS) * 1000,
    pauseMs: 10_000,
    // The api's listen backlog holds one more than it says (sim/api.ts, as Linux).
    pauseBacklog: ACCEPT_BACKLOG + 1,
    totalMs: totalS(s) * 1000,
    seed,
  };
}

export interface ProcessCost {
  readonly wallS: number;
  readonly cpuS: number;
  readonly maxRssMb: number;
}

/**
 * Runs a command under /usr/bin/time: its own output, its exit status, and what it cost
 * as a whole process. An exit status outside `accept` throws.
 */
export function timed(
  argv: readonly string[],
  accept: readonly number[] = [0],
): ProcessCost & { stdout: string; status: number } {
  const r = spawnSync('/usr/bin/time', ['-f', 'METABENCH-TIME %e %U %S %M', ...argv], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
  });
  const m = /METABENCH-TIME (\S+) (\S+) (\S+) (\d+)\s*$/.exec(r.stderr ?? '');
  if (r.status === null || !accept.includes(r.status) || !m)
    throw new Error(
      `${argv.join(' ')} failed (${r.status}): ${(r.stderr ?? '').trim().split('\n').slice(-3).join(' | ')}`,
    );
  return {
    stdout: r.stdout,
    status: r.status,
    wallS: Number(m[1]),
    cpuS: Number(m[2]) + Number(m[3]),
    maxRssMb: Number(m[4]) / 1024,
  };
}

export interface SimRunSummary {
  readonly outcome: string;
  readonly recovered: boolean | null;
  readonly recoveryTimeS: number | null;
  readonly offered: number;
  readonly attempts: number;
  readonly baseline: { readonly goodputPerS: number } | null;
  readonly afterTrigger: { readonly goodputPerS: number } | null;
}

/**
 * `metabench run FILE --runtime sim --quiet [flags]` as a whole process; the results
 * folder is read for its summary, then removed. `nodeFlags` go to node (e.g. --cpu-prof).
 */
export function runSim(
  s: QueueScenario,
  flags: readonly string[] = [],
  nodeFlags: readonly string[] = [],
): ProcessCost & { summary: SimRunSummary } {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-simrun-'));
  try {
    const file = join(dir, 'experiment.yaml');
    writeFileSync(file, experimentYaml(s));
    const out = join(dir, 'out');
    const cost = timed([
      process.execPath,
      ...nodeFlags,
      CLI,
      'run',
      file,
      '--runtime',
      'sim',
      '--out',
      out,
      '--quiet',
      ...flags,
    ]);
    const summary = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as SimRunSummary;
    return { wallS: cost.wallS, cpuS: cost.cpuS, maxRssMb: cost.maxRssMb, summary };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
