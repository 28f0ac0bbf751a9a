import { readdirSync, readFileSync } from 'node:fs';

/**
 * The machine's load as Linux reports it, for the record of what else ran beside a lab
 * run (DESIGN.md §2: an invalid report names the machine's load at the time): the load
 * average (/proc/loadavg), the CPU time stolen by the hypervisor (/proc/stat's `steal`)
 * and the other processes' CPU over an interval (/proc/PID/stat), by name. Pure parsers
 * and one reader of /proc behind an injectable `ProcFiles`, so fixtures test them.
 */

/** How the readers reach /proc: the real one, or fixture files in a test. */
export interface ProcFiles {
  /** A file's text, or null when it cannot be read (a process that exited). */
  read(path: string): string | null;
  /** The numeric entries of /proc: one per process. */
  pids(): number[];
}

export const realProc: ProcFiles = {
  read: (path) => {
    try {
      return readFileSync(path, 'utf8');
    } catch {
      return null;
    }
  },
  pids: () => {
    const out: number[] = [];
    for (const name of readdirSync('/proc')) if (/^\d+$/.test(name)) out.push(Number(name));
    return out;
  },
};

export interface LoadAverage {
  readonly load1: number;
  readonly load5: number;
  readonly load15: number;
}

/** "0.52 0.58 0.59 1/467 12345" → the three averages; throws on anything else. */
export function parseLoadavg(text: string): LoadAverage {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (![a, b, c].every((v) => v !== undefined && Number.isFinite(v) && v >= 0))
    throw new Error(`not a /proc/loadavg text: "${text.trim()}"`);
  return { load1: a!, load5: b!, load15: c! };
}

/** The machine's CPU time so far, in clock ticks summed over every CPU (/proc/stat's `cpu` line). */
export interface CpuTimes {
  /** Every column: user nice system idle iowait irq softirq steal (guest time is inside user). */
  readonly total: number;
  /** idle + iowait: time no task wanted the CPU. */
  readonly idle: number;
  /** Time the hypervisor ran another guest while this one had work: a busy host's sign. */
  readonly steal: number;
}

/** The aggregate `cpu` line of a /proc/stat text; throws when it has none. */
export function parseCpuTimes(stat: string): CpuTimes {
  const m = /^cpu\s+(.*)$/m.exec(stat);
  if (!m) throw new Error('no aggregate "cpu" line in the /proc/stat text');
  const f = m[1]!.trim().split(/\s+/).map(Number);
  if (f.length < 4 || f.some((v) => !Number.isFinite(v)))
    throw new Error(`not a /proc/stat cpu line: "cpu ${m[1]}"`);
  // Columns 9 and 10 (guest, guest_nice) are already counted in user and nice.
  const total = f.slice(0, 8).reduce((s, v) => s + v, 0);
  return { total, idle: (f[3] ?? 0) + (f[4] ?? 0), steal: f[7] ?? 0 };
}

/** Steal time's share of the CPU time between two readings, %; null over no time (or a kernel without the column). */
export function stealPct(before: CpuTimes, after: CpuTimes): number | null {
  const dt = after.total - before.total;
  if (dt <= 0) return null;
  return (100 * Math.max(0, after.steal - before.steal)) / dt;
}

/** One process as /proc/PID/stat describes it. */
export interface ProcStatLine {
  readonly pid: number;
  readonly ppid: number;
  /** The command name (comm, at most 15 characters: `node`, `postgres`, `cc1plus`). */
  readonly name: string;
  /** utime + stime, clock ticks: the process's own CPU (its reaped children's is not its work). */
  readonly ticks: number;
  /** Niceness (field 19). */
  readonly nice: number;
  /** Real-time priority (field 40; 0 for a normal policy) and policy (field 41: 0 normal, 1 FIFO, 2 RR, 3 batch, 5 idle). */
  readonly rtPriority: number;
  readonly policy: number;
}

/** A /proc/PID/stat (or /proc/PID/task/TID/stat) text; null when it is not one. */
export function parseProcStatLine(text: string): ProcStatLine | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // The command name may hold spaces and parentheses: the fields resume after the last ')'.
  const rest = text.slice(close + 2).split(' ');
  const field = (n: number) => Number(rest[n - 3]);
  const pid = Number(text.slice(0, open).trim());
  const ppid = field(4);
  const ticks = field(14) + field(15);
  if (![pid, ppid, ticks].every(Number.isFinite)) return null;
  return {
    pid,
    ppid,
    name: text.slice(open + 1, close),
    ticks,
    nice: field(19),
    rtPriority: field(40) || 0,
    policy: field(41) || 0,
  };
}

/** A kernel worker's name changes with its work queue ("kworker/1:1-events"): all are `kworker`. */
function kernelWorker(name: string): string {
  return name.startsWith('kworker/') ? 'kworker' : name;
}

/** Every process's CPU so far, at one moment. */
export type ProcSnapshot = ReadonlyMap<number, ProcStatLine>;

/** One pass over /proc. */
export function snapshotProcesses(proc: ProcFiles = realProc): ProcSnapshot {
  const out = new Map<number, ProcStatLine>();
  for (const pid of proc.pids()) {
    const text = proc.read(`/proc/${pid}/stat`);
    const p = text ? parseProcStatLine(text) : null;
    if (p) out.set(pid, p);
  }
  return out;
}

/**
 * The `n` names that used the most CPU between two snapshots, most first, leaving out
 * `exclude` and every descendant of it (the orchestrator, the lab's processes and what
 * they fork: Postgres's backends). Processes of one name are summed (a build's many `cc1`;
 * the kernel's workers as `kworker`),
 * and a process that started within the interval counts all its CPU; one that exited
 * within it is not seen. Names that used no CPU are not listed.
 */
export function busiestProcesses(
  before: ProcSnapshot,
  after: ProcSnapshot,
  exclude: Iterable<number>,
  n = 3,
): string[] {
  const excluded = new Set(exclude);
  const isExcluded = (pid: number): boolean => {
    // Walk up the parents (pid 1 and 0 end it); a cycle cannot happen in /proc, but bound it anyway.
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; hops++) {
      if (excluded.has(p)) return true;
      p = after.get(p)?.ppid ?? before.get(p)?.ppid;
    }
    return false;
  };
  const byName = new Map<string, number>();
  for (const [pid, p] of after) {
    const was = before.get(pid);
    // A pid reused by another program within the interval starts from zero.
    const used = was && was.name === p.name && was.ticks <= p.ticks ? p.ticks - was.ticks : p.ticks;
    if (used <= 0 || isExcluded(pid)) continue;
    const name = kernelWorker(p.name);
    byName.set(name, (byName.get(name) ?? 0) + used);
  }
  return [...byName]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, n)
    .map(([name]) => name);
}
