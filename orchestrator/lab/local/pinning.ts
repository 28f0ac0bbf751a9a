import { execFileSync, spawnSync } from 'node:child_process';
import { allowedCpus, formatCpuList, splitCpus, type Pinning } from '../proc/affinity.js';
import { labNicenessArgs } from '../proc/priority.js';

/**
 * The local lab's CPU pinning: while a lab is up, the orchestrator's process (every
 * thread: the generator's event loop, its waker, the scrapers) runs on the generator's
 * CPUs and every process the lab starts on the others, so a busy lab cannot delay the
 * generator's sends and the generator takes no CPU from the lab. taskset (util-linux)
 * does it: the children start under `taskset -c` (what they fork inherits it), the
 * orchestrator is pinned with `taskset -a -p` and given its CPUs back when the last lab
 * is down. Labs up at once in one process share one pinning.
 */

let held: { pinning: Extract<Pinning, { applied: true }>; labs: number } | undefined;

function tasksetRuns(): boolean {
  const r = spawnSync('taskset', ['--version'], { stdio: 'ignore' });
  return r.error === undefined && r.status === 0;
}

/** Every thread of process `pid` onto `cpus` (threads started later inherit it). */
export function pinProcess(pid: number, cpus: readonly number[]): void {
  execFileSync('taskset', ['-a', '-p', '-c', formatCpuList(cpus), String(pid)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

/** Why this process cannot be pinned, or the split it would be pinned to. */
function plan(): Pinning {
  if (process.platform !== 'linux')
    return { applied: false, reason: `no CPU affinity on ${process.platform}` };
  let allowed: number[];
  try {
    allowed = allowedCpus();
  } catch (err) {
    return { applied: false, reason: `cannot read this process's CPUs: ${(err as Error).message}` };
  }
  const split = splitCpus(allowed);
  if (!split)
    return {
      applied: false,
      reason: `${allowed.length} CPU allowed (${formatCpuList(allowed)}): nothing to split`,
      allowedCpus: allowed,
    };
  if (!tasksetRuns())
    return { applied: false, reason: 'taskset (util-linux) not found', allowedCpus: allowed };
  return { applied: true, generatorCpus: split.generator, labCpus: split.lab, allowedCpus: allowed };
}

/**
 * The fewest CPUs on which a lab is pinned unless asked (--pin). On 2 the generator gets
 * one CPU, shared with its own threads (the waker, the scrapers): measured on a 2-core
 * machine, retry-storm's generator then fell behind its schedule in the storm (schedule
 * lag p99 16.5 and 513 ms against the 10 ms validity limit, two runs of two invalid),
 * where unpinned, free to use whichever CPU is idle, it kept it.
 */
export const PIN_BY_DEFAULT_FROM_CPUS = 4;

/**
 * Pins this process to the generator's CPUs for a lab coming up and returns what to
 * record; release() once that lab is down. `pin`: true (--pin) pins on 2 CPUs or more,
 * false (--no-pin) never, undefined from PIN_BY_DEFAULT_FROM_CPUS.
 */
export function acquirePinning(pin: boolean | undefined): Pinning {
  if (pin === false) return { applied: false, reason: '--no-pin' };
  if (held) {
    held.labs++;
    return held.pinning;
  }
  const p = plan();
  if (!p.applied) return p;
  if (pin === undefined && p.allowedCpus.length < PIN_BY_DEFAULT_FROM_CPUS)
    return {
      applied: false,
      reason: `${p.allowedCpus.length} CPUs allowed (${formatCpuList(p.allowedCpus)}): pinned by default from ${PIN_BY_DEFAULT_FROM_CPUS}; --pin pins anyway`,
      allowedCpus: p.allowedCpus,
    };
  try {
    pinProcess(process.pid, p.generatorCpus);
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    return {
      applied: false,
      reason: `taskset failed: ${e.stderr?.toString().trim() || e.message}`,
      allowedCpus: p.allowedCpus,
    };
  }
  held = { pinning: p, labs: 1 };
  return p;
}

/** A lab that acquired an applied pinning is down: the last one gives the orchestrator its CPUs back. */
export function releasePinning(): void {
  if (!held || --held.labs > 0) return;
  const { allowedCpus: all } = held.pinning;
  held = undefined;
  try {
    pinProcess(process.pid, all);
  } catch (err) {
    // Lab.down never throws: say so on stderr, the run's results stand.
    process.stderr.write(
      `metabench: could not give the orchestrator its CPUs back: ${(err as Error).message}\n`,
    );
  }
}

/**
 * `cmd args` as a lab process: on `cpus` (undefined: unpinned, as it is) and at the lab's
 * niceness, 0, whatever the generator's thread that starts it holds (proc/priority.ts).
 * `nice` and `taskset` exec the command, so the child's pid is the command's.
 */
export function asLabProcess(
  cpus: readonly number[] | undefined,
  cmd: string,
  args: readonly string[],
  niceArgs: readonly string[] = labNicenessArgs(),
): [string, string[]] {
  const pinned = cpus ? ['taskset', '-c', formatCpuList(cpus), cmd, ...args] : [cmd, ...args];
  const full = [...niceArgs, ...pinned];
  return [full[0]!, full.slice(1)];
}
