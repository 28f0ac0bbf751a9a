import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { BenchError } from '../../../foundation/errors.js';
import { processName, type Component, type LabProcess, type Target, type UndoRecipe } from '../Lab.js';
import { targetOf } from '../target.js';
import { processStartTicks } from '../proc/procStat.js';
import { processTree } from '../proc/procUsage.js';
import { asLabProcess } from './pinning.js';

/**
 * Process supervision for the local lab: starting a node service and waiting for it to
 * listen, freezing and continuing process trees, and the journaled recipes that undo
 * both when the orchestrator dies.
 */

const START_TIMEOUT_MS = 15_000;

/**
 * Spawns a node service (`args` starts with its main), its output into `log` under
 * `[tag]`; `spawned` is called at once (the caller keeps the child and journals it, so a
 * failed start is still stopped), then resolves with the port the service says it listens on.
 */
export async function startNodeService(
  args: readonly string[],
  o: {
    readonly tag: string;
    readonly what: string;
    readonly log: (text: string) => void;
    readonly spawned: (child: ChildProcess) => void;
    /** The lab's CPUs when it is pinned (pinning.ts). */
    readonly cpus?: readonly number[] | undefined;
  },
): Promise<number> {
  const child = spawn(...asLabProcess(o.cpus, process.execPath, args), { stdio: ['pipe', 'pipe', 'pipe'] });
  o.spawned(child);
  child.stderr?.on('data', (d: Buffer) => o.log(`[${o.tag}] ${d}`));
  const msg = await readyLine(child, o.what, (line) => o.log(`[${o.tag}] ${line}\n`));
  return msg.port;
}

/** Waits for a child's {"event":"listening","port":N} line on stdout; rejects if it exits or takes too long. */
function readyLine(
  child: ChildProcess,
  what: string,
  log: (line: string) => void,
): Promise<{ port: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new BenchError('E_LAB_PREFLIGHT', `${what} did not start within ${START_TIMEOUT_MS / 1000} s`),
        ),
      START_TIMEOUT_MS,
    );
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      log(line);
      try {
        const msg = JSON.parse(line) as { event?: string; port?: number };
        if (msg.event === 'listening' && typeof msg.port === 'number') {
          clearTimeout(timer);
          resolve({ port: msg.port });
        }
      } catch {
        /* not a status line */
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(
        new BenchError(
          'E_LAB_PREFLIGHT',
          `${what} exited while starting (code ${code}, signal ${signal}); see the lab log`,
        ),
      );
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new BenchError('E_LAB_PREFLIGHT', `cannot start ${what}: ${err.message}`));
    });
  });
}

export function signalAll(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids)
    try {
      process.kill(pid, signal);
    } catch {
      /* gone */
    }
}

/**
 * The process trees a pause froze, by component or api replica (`api[1]`) (SIGSTOP /
 * SIGCONT, as `docker pause` freezes a cgroup).
 */
export class PausedTrees {
  private readonly trees = new Map<Target, number[]>();

  /** Stops `root` first, so it forks nothing more; then the tree as `tree()` finds it. */
  pause(c: Target, root: number, tree: () => number[]): void {
    signalAll([root], 'SIGSTOP');
    const pids = tree();
    this.trees.set(c, pids);
    signalAll(pids, 'SIGSTOP');
  }

  resume(c: Target): void {
    const pids = this.trees.get(c);
    this.trees.delete(c);
    if (pids) signalAll(pids, 'SIGCONT');
  }

  /** The component (or replica) is being killed or stopped: nothing of it to continue. */
  forget(c: Target): void {
    this.trees.delete(c);
  }

  /** Continues every frozen tree but `except`'s (already stopped: every replica of the api), and forgets them all. */
  resumeAll(except: Component): void {
    for (const [c, pids] of this.trees) if (targetOf(c).component !== except) signalAll(pids, 'SIGCONT');
    this.trees.clear();
  }
}

/**
 * SIGKILL to every process the lab started (Postgres's whole tree: its backends would
 * otherwise hold the shared memory), the paused ones continued first so nothing stays
 * frozen, then the Postgres data directory removed. The api and the fault proxy also
 * exit by themselves when the orchestrator dies; Redis and Postgres do not.
 */
export function teardownRecipe(
  processes: readonly LabProcess[],
  postgresDataDir: string | undefined,
  /** Further pids to stop with them (a reference server's whole tree). */
  more: readonly number[] = [],
): UndoRecipe {
  const pids = processes.flatMap((p) => (p.component === 'postgres' ? processTree(p.pid) : [p.pid]));
  const targets = [...new Set([...pids, ...more])].map((pid) => ({
    pid,
    startTicks: processStartTicks(pid),
  }));
  if (targets.length === 0) return { kind: 'none', what: 'the lab (nothing running)' };
  return {
    kind: 'steps',
    what: `stop the lab (${processes.map(processName).join(', ')})`,
    steps: [
      { kind: 'signals', targets, signal: 'SIGCONT', what: 'continue' },
      { kind: 'signals', targets, signal: 'SIGKILL', what: 'kill' },
      ...(postgresDataDir
        ? [{ kind: 'remove' as const, path: postgresDataDir, what: `remove Postgres's data directory` }]
        : []),
    ],
  };
}

/** Continues `c`'s frozen processes `pids` (journaled before a pause): a component's, or api replicas'. */
export function resumeRecipe(c: Target, pids: readonly number[]): UndoRecipe {
  if (pids.length === 1) {
    const pid = pids[0]!;
    return {
      kind: 'signal',
      pid,
      startTicks: processStartTicks(pid),
      signal: 'SIGCONT',
      what: `resume ${c} (pid ${pid})`,
    };
  }
  return {
    kind: 'signals',
    targets: pids.map((pid) => ({ pid, startTicks: processStartTicks(pid) })),
    signal: 'SIGCONT',
    what: `resume ${c} (pids ${pids.join(', ')})`,
  };
}
