import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/PID/stat's CPU times (USER_HZ: 100 on every Linux we know). */
export const CLOCK_TICKS_PER_S = 100;

export interface ProcUsage {
  /** CPU time used so far, seconds: user + system of the process and of its reaped children, plus its living descendants'. */
  readonly cpuSeconds: number;
  /** Resident set size of the process and its living descendants, bytes (shared pages counted in each). */
  readonly rssBytes: number;
  /**
   * Their resident anonymous memory (RssAnon: heaps and stacks), bytes: what a leak
   * grows. Unlike the RSS it holds no shared memory, so Postgres's shared buffers being
   * touched by each backend for the first time do not look like growth.
   */
  readonly anonBytes: number;
}

interface StatFields {
  readonly ppid: number;
  readonly ticks: number;
}

/**
 * Fields of /proc/PID/stat after the command name: ppid and utime + stime + cutime + cstime.
 * A reaped child's CPU moves into its parent's cutime/cstime, so the sum over a process
 * tree is conserved when a child (a Postgres backend) exits.
 */
export function parseStat(stat: string): StatFields | null {
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // rest[0] is field 3 (state): field n is rest[n - 3].
  const ppid = Number(rest[4 - 3]);
  const ticks = [14, 15, 16, 17].reduce((a, f) => a + Number(rest[f - 3]), 0);
  return Number.isFinite(ppid) && Number.isFinite(ticks) ? { ppid, ticks } : null;
}

/** VmRSS of /proc/PID/status in bytes; 0 when absent (a zombie). */
export function parseRssBytes(status: string): number {
  return statusKb(status, 'VmRSS') * 1024;
}

/** RssAnon of /proc/PID/status in bytes; 0 when absent (a zombie). */
export function parseAnonBytes(status: string): number {
  return statusKb(status, 'RssAnon') * 1024;
}

function statusKb(status: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
  return m ? Number(m[1]) : 0;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** pid → ppid of every process, from one pass over /proc. */
function parentMap(): Map<number, number> {
  const out = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const stat = read(`/proc/${name}/stat`);
    const f = stat ? parseStat(stat) : null;
    if (f) out.set(Number(name), f.ppid);
  }
  return out;
}

/**
 * CPU and memory of each root pid's process tree, read from /proc. One pass over /proc
 * finds the descendants (Postgres forks a backend per connection). Roots that are gone
 * are absent from the result.
 */
export function readProcUsage(roots: readonly number[]): Map<number, ProcUsage> {
  const parents = parentMap();
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parents) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out = new Map<number, ProcUsage>();
  for (const root of roots) {
    if (!parents.has(root)) continue;
    let ticks = 0;
    let rss = 0;
    let anon = 0;
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      const stat = read(`/proc/${pid}/stat`);
      const f = stat ? parseStat(stat) : null;
      if (!f) continue;
      ticks += f.ticks;
      const status = read(`/proc/${pid}/status`);
      if (status) {
        rss += parseRssBytes(status);
        anon += parseAnonBytes(status);
      }
      stack.push(...(children.get(pid) ?? []));
    }
    out.set(root, { cpuSeconds: ticks / CLOCK_TICKS_PER_S, rssBytes: rss, anonBytes: anon });
  }
  return out;
}

/** `root` and every living descendant of it (parents before children). */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const [pid, ppid] of parentMap()) {
    const list = children.get(ppid);
    if (list) list.push(pid);
    else children.set(ppid, [pid]);
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    out.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return out;
}
