import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { UndoRecipe } from '../undoRecipe.js';

/**
 * A real CPU quota on a component of the local lab (the `cpu-limit` trigger): its process
 * tree moved into a cgroup of its own under metabench/, with cpu.cfs_quota_us (cgroup v1,
 * the cpu controller) or cpu.max (v2). Processes the component forks later (Postgres's
 * backends) inherit it. The undo lifts the quota first, so even a half-done undo leaves
 * no limit, then moves the processes back to the cgroup each came from and removes the
 * directory.
 */

const PERIOD_US = 100_000;

export interface CpuCgroups {
  readonly version: 1 | 2;
  /** The hierarchy's mount: /sys/fs/cgroup/cpu (v1), /sys/fs/cgroup (v2). */
  readonly mount: string;
}

/** Where this machine lets metabench set a CPU quota, or why it does not. */
export function cpuCgroups(root = '/sys/fs/cgroup'): CpuCgroups | { readonly refused: string } {
  for (const mount of [join(root, 'cpu'), join(root, 'cpu,cpuacct')])
    if (existsSync(join(mount, 'cpu.cfs_quota_us'))) return writable({ version: 1, mount });
  if (existsSync(join(root, 'cgroup.controllers'))) {
    const controllers = readFileSync(join(root, 'cgroup.controllers'), 'utf8');
    if (!/\bcpu\b/.test(controllers))
      return {
        refused: `cgroup v2 at ${root} has no cpu controller (cgroup.controllers: ${controllers.trim()})`,
      };
    return writable({ version: 2, mount: root });
  }
  return { refused: `no cgroup cpu controller is mounted under ${root} (neither v1's cpu nor v2's)` };
}

function writable(c: CpuCgroups): CpuCgroups | { readonly refused: string } {
  const probe = join(c.mount, 'metabench');
  try {
    mkdirSync(probe, { recursive: true });
    return c;
  } catch (err) {
    return {
      refused: `cannot make a cgroup under ${c.mount} (${(err as NodeJS.ErrnoException).code ?? String(err)}): a CPU quota needs root, or a delegated cgroup`,
    };
  }
}

/** The cgroup a component's quota lives in: one per component and root pid. */
export function quotaDir(c: CpuCgroups, name: string, rootPid: number): string {
  return join(c.mount, 'metabench', `${name.replace(/[^a-z0-9_-]/gi, '_')}-${rootPid}`);
}

/** The cgroup (path under the mount) `pid` is in now, for the controller `c` names. */
function cgroupOf(c: CpuCgroups, pid: number): string {
  const lines = readFileSync(`/proc/${pid}/cgroup`, 'utf8').trim().split('\n');
  for (const line of lines) {
    const [, controllers, path] = line.split(':') as [string, string, string];
    if (c.version === 2 ? controllers === '' : controllers.split(',').includes('cpu')) return path;
  }
  return '/';
}

/** Moves `pids` into a cgroup limited to `cpus` cores; returns its directory. */
export function limitCpu(c: CpuCgroups, dir: string, pids: readonly number[], cpus: number): void {
  mkdirSync(dir, { recursive: true });
  const quota = Math.max(1000, Math.round(cpus * PERIOD_US));
  if (c.version === 1) {
    writeFileSync(join(dir, 'cpu.cfs_period_us'), String(PERIOD_US));
    writeFileSync(join(dir, 'cpu.cfs_quota_us'), String(quota));
  } else {
    writeFileSync(join(dir, 'cpu.max'), `${quota} ${PERIOD_US}`);
  }
  for (const pid of pids)
    try {
      writeFileSync(join(dir, 'cgroup.procs'), String(pid));
    } catch (err) {
      // A process that exited since the tree was read has nothing to limit.
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
}

/**
 * The undo as a journal recipe (a shell command, so it runs after metabench died): lift the
 * quota, move every process still in the cgroup back to where `pids` came from, remove it.
 */
export function unlimitRecipe(c: CpuCgroups, dir: string, pids: readonly number[], what: string): UndoRecipe {
  const back = join(c.mount, pids.length > 0 ? cgroupOf(c, pids[0]!) : '/');
  const lift = c.version === 1 ? `echo -1 > '${dir}/cpu.cfs_quota_us'` : `echo max > '${dir}/cpu.max'`;
  return {
    kind: 'shell',
    command: `[ -d '${dir}' ] || exit 0; ${lift}; for p in $(cat '${dir}/cgroup.procs'); do echo $p > '${back}/cgroup.procs' 2>/dev/null || true; done; rmdir '${dir}' 2>/dev/null || true`,
    cwd: '/',
    what,
  };
}

/** The undo in this process: the same steps as the recipe. */
export function unlimitCpu(c: CpuCgroups, dir: string, back: string): void {
  if (!existsSync(dir)) return;
  writeFileSync(join(dir, c.version === 1 ? 'cpu.cfs_quota_us' : 'cpu.max'), c.version === 1 ? '-1' : 'max');
  for (const p of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean))
    try {
      writeFileSync(join(back, 'cgroup.procs'), p);
    } catch {
      // gone meanwhile
    }
  try {
    rmdirSync(dir);
  } catch {
    // a process still in it (moving it back failed): the quota is lifted all the same
  }
}

/** The cgroup directory `pid` belongs to now (to move it back to). */
export function cgroupDirOf(c: CpuCgroups, pid: number): string {
  return join(c.mount, cgroupOf(c, pid));
}
