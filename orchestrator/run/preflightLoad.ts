import { parseLoadavg, realProc, snapshotProcesses, busiestProcesses } from '../lab/proc/machineLoad.js';
import { machineCores } from '../results/machineState.js';

/**
 * Before a lab run starts: is the machine busy enough that the run's schedule will slip?
 * A lab run needs RUN_NEEDS_CORES of the machine's cores: the generator's event loop
 * (up to 0.9 of a core before run validity's check 5 fails) and the lab's processes at
 * the smallest scale. When the 1-minute load average exceeds what is left (cores −
 * RUN_NEEDS_CORES, at least QUIET_LOAD_FLOOR), the run is warned about, with the busiest
 * other processes named; `--wait-for-quiet` waits for the load to fall first.
 */

/** The generator's core and half a core for the lab (api, fault proxy, Redis, Postgres) at the smallest scale. */
export const RUN_NEEDS_CORES = 1.5;
/**
 * The least load a machine of few cores is let have: a 2-core machine never reads 0 (its
 * own housekeeping, the shell), and half a core is what the generator tolerates beside it
 * with its priority raised (benchmarks/background.ts).
 */
export const QUIET_LOAD_FLOOR = 0.5;

/** The 1-minute load above which a lab run is warned about, on `cores`. */
export function quietThreshold(cores: number, needs = RUN_NEEDS_CORES): number {
  return Math.max(QUIET_LOAD_FLOOR, cores - needs);
}

/** Where the preflight reads the machine's load: /proc, or a test's. */
export interface LoadSource {
  load1(): number;
  /** The top 3 other processes by CPU over the next `ms` (names only). */
  busy(ms: number): Promise<string[]>;
}

export const procLoadSource: LoadSource = {
  load1: () => parseLoadavg(realProc.read('/proc/loadavg') ?? '').load1,
  busy: async (ms) => {
    const before = snapshotProcesses();
    await new Promise((r) => setTimeout(r, ms));
    return busiestProcesses(before, snapshotProcesses(), [process.pid]);
  },
};

export interface LoadCheck {
  readonly load1: number;
  readonly threshold: number;
  readonly cores: number;
  /** Whether the load was at most the threshold when the run went ahead. */
  readonly quiet: boolean;
  /** How long it waited for the load to fall. */
  readonly waitedMs: number;
  /** The busiest other processes, when it was not quiet. */
  readonly busy: readonly string[];
  /** The warning said, when it was not quiet. */
  readonly warning: string | null;
}

export interface PreflightOptions {
  readonly source?: LoadSource;
  readonly cores?: number;
  /** --wait-for-quiet: wait up to this long for the load to fall (undefined: do not wait). */
  readonly waitMs?: number;
  /** How often the load is read again while waiting (the kernel updates it every 5 s). */
  readonly pollMs?: number;
  /** Where the warning goes (stderr). */
  readonly say: (line: string) => void;
  /** The status line while waiting (redrawn). */
  readonly status?: (line: string) => void;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => number;
}

/** How long the busy processes are measured over: long enough to see a duty-cycled process. */
const BUSY_SAMPLE_MS = 1000;

/**
 * Reads the load; if it is above the threshold, waits for it to fall (up to `waitMs`, with
 * a status line), then warns if it is still above. Never refuses: the run goes ahead, and
 * its manifest records the load it ran beside.
 */
export async function preflightLoad(o: PreflightOptions): Promise<LoadCheck> {
  const source = o.source ?? procLoadSource;
  const cores = o.cores ?? machineCores();
  const threshold = quietThreshold(cores);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const now = o.now ?? (() => Date.now());
  const pollMs = o.pollMs ?? 5000;
  const t0 = now();
  let load1 = source.load1();
  if (load1 <= threshold)
    return { load1, threshold, cores, quiet: true, waitedMs: 0, busy: [], warning: null };
  let busy = await source.busy(BUSY_SAMPLE_MS);
  if (o.waitMs !== undefined) {
    while (load1 > threshold && now() - t0 < o.waitMs) {
      o.status?.(
        `waiting for the machine to quiet: load ${load1.toFixed(2)} > ${threshold} (busy: ${busy.join(', ') || 'none seen'}), ${Math.round((now() - t0) / 1000)} of ${Math.round(o.waitMs / 1000)} s`,
      );
      await sleep(Math.min(pollMs, Math.max(0, o.waitMs - (now() - t0))));
      load1 = source.load1();
      if (load1 > threshold) busy = await source.busy(BUSY_SAMPLE_MS);
    }
  }
  const waitedMs = now() - t0;
  if (load1 <= threshold) return { load1, threshold, cores, quiet: true, waitedMs, busy: [], warning: null };
  const warning =
    `metabench: warning: the machine's load (${load1.toFixed(2)}, 1-minute average) is above ${threshold} ` +
    `on ${cores} cores (a lab run needs ${RUN_NEEDS_CORES} of them)` +
    (busy.length > 0 ? `; busiest other processes: ${busy.join(', ')}` : '') +
    `. The generator may fall behind its schedule and the run come out invalid` +
    (o.waitMs === undefined
      ? '; --wait-for-quiet waits for the load to fall first'
      : `; waited ${Math.round(waitedMs / 1000)} s, going ahead`) +
    '.';
  o.say(warning);
  return { load1, threshold, cores, quiet: false, waitedMs, busy, warning };
}
