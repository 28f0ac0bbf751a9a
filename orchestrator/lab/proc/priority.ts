import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { waker, warmUpClock } from '../../../foundation/waker.js';
import { parseProcStatLine, realProc, type ProcFiles } from './machineLoad.js';

/**
 * The load generator's scheduling priority (issue 31): on a machine shared with other
 * work, a generator thread that waits for a CPU sends late, and the run is invalid. So a
 * real run asks the kernel to prefer the generator's threads — this process's main thread,
 * whose event loop sends every attempt, and the waker's, which wakes it — over everything
 * else, the lab included:
 *
 * - `high` (the default): niceness HIGH_NICENESS, below the lab's 0 (needs CAP_SYS_NICE or
 *   an RLIMIT_NICE that allows it: root has both);
 * - `realtime`: SCHED_RR at the lowest real-time priority, with SCHED_RESET_ON_FORK so what
 *   the thread starts (the lab's processes, libuv's threads) comes out normal; where it is
 *   refused, `high` is tried. Both threads sleep between sends (the waker in Atomics.wait,
 *   the event loop in epoll) and the kernel caps real-time tasks at 95% of the CPU
 *   (sched_rt_runtime_us), so a busy generator cannot lock the machine up;
 * - `normal`: nothing is asked.
 *
 * What was granted and what was refused, and why, goes into manifest.json; the lab's own
 * processes start at niceness 0 whatever this thread's (labNicenessArgs).
 */

export const PRIORITY_MODES = ['normal', 'high', 'realtime'] as const;
export type PriorityMode = (typeof PRIORITY_MODES)[number];
export const DEFAULT_PRIORITY: PriorityMode = 'high';

/** The generator's niceness under `high`: well below the lab's 0 (CFS gives a nice −10 task about 9× a nice-0 one's weight). */
export const HIGH_NICENESS = -10;
/** SCHED_RR's lowest priority: above every normal task, below the kernel's own real-time threads. */
export const REALTIME_PRIORITY = 1;
/** The niceness the lab's processes run at. */
export const LAB_NICENESS = 0;

/** What manifest.json records of the generator's priority (orchestrator/results/machineState.ts). */
export interface PriorityGrant {
  /** The mode asked for: normal, high or realtime. */
  readonly requested: PriorityMode;
  /** What the generator's threads got: `nice -10`, `SCHED_RR 1`, `normal`; null when nothing asked was granted. */
  readonly granted: string | null;
  /** What was refused and the kernel's reason; null when nothing was. */
  readonly refused: string | null;
  /** The kernel ids of the threads it applies to (the event loop's first). */
  readonly threads: readonly number[];
}

/** How a priority is set on one thread: the real system calls, or a test's. Each throws with the reason on refusal. */
export interface PriorityOps {
  setNice(tid: number, nice: number): void;
  /** SCHED_RR at `priority` with SCHED_RESET_ON_FORK. */
  setRealtime(tid: number, priority: number): void;
  /** SCHED_OTHER again (always permitted: a thread may lower its own policy). */
  setNormal(tid: number): void;
}

function errorText(err: unknown): string {
  const e = err as { stderr?: Buffer | string; code?: string; message?: string };
  const stderr = e.stderr?.toString().trim();
  if (stderr) return stderr.replace(/^chrt: /, '');
  if (e.code === 'ENOENT') return 'chrt (util-linux) not found';
  return e.message ?? String(err);
}

export const realPriorityOps: PriorityOps = {
  setNice: (tid, nice) => {
    try {
      // On Linux setpriority(PRIO_PROCESS, tid) sets that one thread's niceness.
      os.setPriority(tid, nice);
    } catch (err) {
      const code = (err as { info?: { code?: string } }).info?.code ?? (err as { code?: string }).code;
      throw new Error(
        code === 'EACCES' || code === 'EPERM'
          ? `${code}: not permitted (a niceness below 0 needs CAP_SYS_NICE or RLIMIT_NICE of at least ${20 - nice})`
          : (err as Error).message,
        { cause: err },
      );
    }
  },
  setRealtime: (tid, priority) => {
    try {
      execFileSync('chrt', ['--reset-on-fork', '--rr', '-p', String(priority), String(tid)], {
        stdio: ['ignore', 'ignore', 'pipe'],
      });
    } catch (err) {
      throw new Error(errorText(err), { cause: err });
    }
  },
  setNormal: (tid) => {
    execFileSync('chrt', ['--other', '-p', '0', String(tid)], { stdio: 'ignore' });
  },
};

/** A thread's niceness, policy and real-time priority as /proc says (null when it is gone). */
export function threadScheduling(
  tid: number,
  proc: ProcFiles = realProc,
): { nice: number; policy: number; rtPriority: number } | null {
  const text = proc.read(`/proc/${process.pid}/task/${tid}/stat`) ?? proc.read(`/proc/${tid}/stat`);
  const p = text ? parseProcStatLine(text) : null;
  return p ? { nice: p.nice, policy: p.policy, rtPriority: p.rtPriority } : null;
}

/** The generator's threads: this process's main thread, then the waker's once it runs. */
export async function generatorThreads(): Promise<number[]> {
  await warmUpClock();
  const w = waker().threadId;
  return w === undefined ? [process.pid] : [process.pid, w];
}

interface Held {
  readonly threads: readonly number[];
  /** Each thread's niceness before, to give it back. */
  readonly before: readonly { tid: number; nice: number }[];
  readonly realtime: boolean;
}
let held: Held | undefined;

/**
 * Asks for `mode` for `threads`; returns what to record. A refusal on any thread undoes
 * what was set on the others: the threads get the same or nothing. Call
 * releaseGeneratorPriority() once the run is over.
 */
export function requestGeneratorPriority(
  mode: PriorityMode,
  threads: readonly number[],
  ops: PriorityOps = realPriorityOps,
  platform: string = process.platform,
): PriorityGrant {
  const record = (granted: string | null, refused: string | null): PriorityGrant => ({
    requested: mode,
    granted,
    refused,
    threads,
  });
  if (mode === 'normal') return record('normal', null);
  if (platform !== 'linux') return record(null, `no per-thread priority on ${platform}`);
  releaseGeneratorPriority(ops);
  const before = threads.map((tid) => ({ tid, nice: threadScheduling(tid)?.nice ?? 0 }));
  let refusedRt: string | null = null;
  if (mode === 'realtime') {
    const done: number[] = [];
    try {
      for (const tid of threads) {
        ops.setRealtime(tid, REALTIME_PRIORITY);
        done.push(tid);
      }
      held = { threads, before, realtime: true };
      return record(`SCHED_RR ${REALTIME_PRIORITY}`, null);
    } catch (err) {
      for (const tid of done) tryQuietly(() => ops.setNormal(tid));
      refusedRt = `SCHED_RR ${REALTIME_PRIORITY}: ${(err as Error).message}`;
    }
  }
  const done: { tid: number; nice: number }[] = [];
  try {
    for (const b of before) {
      ops.setNice(b.tid, HIGH_NICENESS);
      done.push(b);
    }
    held = { threads, before, realtime: false };
    return record(`nice ${HIGH_NICENESS}`, refusedRt);
  } catch (err) {
    for (const b of done) tryQuietly(() => ops.setNice(b.tid, b.nice));
    const refusedNice = `nice ${HIGH_NICENESS}: ${(err as Error).message}`;
    return record(null, refusedRt ? `${refusedRt}; ${refusedNice}` : refusedNice);
  }
}

/** The run is over: the generator's threads get back what they had (lowering a priority is always permitted). */
export function releaseGeneratorPriority(ops: PriorityOps = realPriorityOps): void {
  const h = held;
  held = undefined;
  if (!h) return;
  for (const b of h.before) {
    if (h.realtime) tryQuietly(() => ops.setNormal(b.tid));
    else tryQuietly(() => ops.setNice(b.tid, b.nice));
  }
}

function tryQuietly(f: () => void): void {
  try {
    f();
  } catch {
    // A thread that is gone needs nothing given back.
  }
}

/**
 * The niceness a process this thread starts now would inherit: its own, but 0 for a
 * negative one under SCHED_RESET_ON_FORK (what `realtime` sets).
 */
export function inheritedNiceness(): number {
  // The lab is started from the main thread (the event loop), whose kernel id is the pid.
  const nice = threadScheduling(process.pid)?.nice ?? 0;
  return held?.realtime && nice < 0 ? 0 : nice;
}

/**
 * `nice -n N` to put before a lab process's command so it runs at LAB_NICENESS whatever
 * this thread's niceness (a `high` generator's −10, or an orchestrator started under
 * `nice`); empty when it would inherit LAB_NICENESS anyway. A lab process started while
 * the generator holds its priority (a restart trigger) starts at 0 too.
 */
export function labNicenessArgs(inherited: number = inheritedNiceness()): string[] {
  const delta = LAB_NICENESS - inherited;
  return delta === 0 ? [] : ['nice', '-n', String(delta)];
}

/** The niceness the lab's processes run at, as /proc says (the first readable one), else LAB_NICENESS. */
export function labNiceness(pids: readonly number[], proc: ProcFiles = realProc): number {
  for (const pid of pids) {
    const text = proc.read(`/proc/${pid}/stat`);
    const p = text ? parseProcStatLine(text) : null;
    if (p) return p.nice;
  }
  return LAB_NICENESS;
}
