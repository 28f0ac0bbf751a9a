import { runtimePlugin } from '../lab/RuntimePlugin.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { parseDuration } from '../../foundation/units.js';
import { DEFAULT_PRIORITY, PRIORITY_MODES, type PriorityMode } from '../lab/proc/priority.js';
import type { Runtime } from '../lab/runtimes.js';
import { preflightLoad, type LoadCheck, type LoadSource } from '../run/preflightLoad.js';

/** --wait-for-quiet with no value waits this long. */
export const DEFAULT_QUIET_WAIT_MS = 30_000;

/** `--priority` (run, sweep): the generator's scheduling priority in a lab run (lab/proc/priority.ts). */
export function addPriorityOption(cmd: Command): Command {
  return cmd.addOption(
    new Option(
      '--priority <MODE>',
      `lab runs: the load generator's scheduling priority — high: niceness below the lab's; realtime: SCHED_RR (falls back to high where refused); normal: none asked (default: ${DEFAULT_PRIORITY} where permitted; manifest.json records what was granted)`,
    ).choices([...PRIORITY_MODES]),
  );
}

function parseWait(v: string): number {
  const d = parseDuration(v);
  if (!d.ok)
    throw new InvalidArgumentError(`--wait-for-quiet takes a duration such as 30s or 2m (${d.message})`);
  return d.value;
}

/** `--wait-for-quiet[=30s]` (run, sweep): before a lab run, wait for the machine's load to fall. */
export function addWaitForQuietOption(cmd: Command): Command {
  return cmd.option(
    '--wait-for-quiet [DURATION]',
    `lab runs: when the machine's load leaves the run too few cores, wait up to DURATION (default ${DEFAULT_QUIET_WAIT_MS / 1000}s) for it to fall before starting; without it, the run only warns`,
    parseWait,
  );
}

export interface MachineFlags {
  priority?: PriorityMode;
  /** true: the flag without a value. */
  waitForQuiet?: number | boolean;
}

/** The wait --wait-for-quiet asks for, in ms (undefined: not given). */
export function quietWaitMs(flags: MachineFlags): number | undefined {
  const w = flags.waitForQuiet;
  return w === undefined || w === false ? undefined : w === true ? DEFAULT_QUIET_WAIT_MS : w;
}

/**
 * The load preflight before a lab run (local or docker: the simulation does not depend on
 * the machine, a swarm's lab is elsewhere): warns on stderr, and with --wait-for-quiet waits
 * with a status line.
 */
export async function machinePreflight(
  runtime: Runtime,
  flags: MachineFlags,
  opts: { quiet?: boolean; source?: LoadSource; err?: Pick<NodeJS.WriteStream, 'write' | 'isTTY'> } = {},
): Promise<LoadCheck | undefined> {
  if (!runtimePlugin(runtime).capabilities.labOnThisMachine) return undefined;
  const err = opts.err ?? process.stderr;
  const tty = Boolean(err.isTTY);
  let drawn = false;
  const waitMs = quietWaitMs(flags);
  const check = await preflightLoad({
    ...(opts.source ? { source: opts.source } : {}),
    ...(waitMs !== undefined ? { waitMs } : {}),
    say: (line) => {
      if (drawn && tty) err.write('\r\x1b[K');
      drawn = false;
      err.write(line + '\n');
    },
    status: (line) => {
      if (opts.quiet) return;
      if (tty) {
        err.write(`\r\x1b[K${line}`);
        drawn = true;
      } else err.write(line + '\n');
    },
  });
  if (drawn && tty) err.write('\r\x1b[K');
  return check;
}
