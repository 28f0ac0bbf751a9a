import { readFileSync } from 'node:fs';
import { BenchError } from '../../../foundation/errors.js';
import {
  netemAddCommand,
  netemDelCommand,
  nothingToDelete,
  runCommand,
  type NetemSpec,
  type Runner,
} from '../netem.js';

/**
 * The netem qdisc on a container's interface, set from this host (lab/netem.ts): the container's
 * main process must be one this host's /proc sees (a local engine, not a VM or a remote one),
 * whose network namespace nsenter enters.
 */

/** A container's main process as this host sees it. */
export interface HostContainer {
  readonly id: string;
  readonly name: string;
  readonly pid: number;
}

function hostPid(c: HostContainer): number {
  let cgroup = '';
  try {
    cgroup = c.pid > 0 ? readFileSync(`/proc/${c.pid}/cgroup`, 'utf8') : '';
  } catch {
    // gone, or not on this host
  }
  if (!cgroup.includes(c.id))
    throw new BenchError(
      'E_LAB',
      `netem on ${c.name}: its process is not on this machine's /proc (a remote engine or a VM): netem is set from this host with nsenter`,
    );
  return c.pid;
}

export function addNetem(c: HostContainer, spec: NetemSpec, run: Runner = runCommand): void {
  const argv = netemAddCommand(hostPid(c), spec);
  const r = run(argv);
  if (r.status !== 0)
    throw new BenchError(
      'E_LAB',
      `netem on ${c.name}: \`${argv.join(' ')}\` failed: ${(r.error ?? r.stderr).trim()}`,
    );
}

/** Takes the qdisc off; a container gone, or with no qdisc of ours left, has nothing to undo. Says what it did. */
export function removeNetem(c: HostContainer, run: Runner = runCommand): string {
  let pid: number;
  try {
    pid = hostPid(c);
  } catch {
    return `${c.name}: its process is gone, and its interface with it: nothing to undo`;
  }
  const argv = netemDelCommand(pid);
  const r = run(argv);
  if (r.status === 0) return `${c.name}: ${argv.join(' ')}`;
  if (r.error === undefined && nothingToDelete(r.stderr))
    return `${c.name}: no netem qdisc left, nothing to undo`;
  throw new Error(`netem undo on ${c.name}: \`${argv.join(' ')}\` failed: ${(r.error ?? r.stderr).trim()}`);
}
