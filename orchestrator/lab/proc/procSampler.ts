import type { Clock } from '../../../foundation/clock.js';
import { processName, type LabProcess } from '../Lab.js';
import { readProcUsage, type ProcUsage } from './procUsage.js';

/**
 * Samples every lab process's CPU and memory once per bucket from /proc, into columns
 * `proc_<component>_cpu` (CPU seconds used during that bucket: the delta of cumulative
 * CPU time, not `ps`'s lifetime-averaged %CPU), `proc_<component>_rss_bytes` and
 * `proc_<component>_anon_bytes` (resident, and resident anonymous, memory at the
 * bucket's end); `<component>` is `api0`, `api1`… for api replicas (Lab.ts, processName),
 * plain `api` for a lab of one. A bucket in which a process was not readable stays empty; a process
 * that was replaced (new pid) starts a new delta.
 */
export class ProcSampler {
  private readonly series: Record<string, (number | null)[]> = {};
  private last = new Map<string, { pid: number; usage: ProcUsage }>();
  private stopped = false;
  private readonly halt = new AbortController();
  private loop: Promise<void> | undefined;

  constructor(
    private readonly processes: () => readonly LabProcess[],
    private readonly clock: Clock,
    private readonly bucketMs = 1000,
    private readonly read: (pids: readonly number[]) => Map<number, ProcUsage> = readProcUsage,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    this.sample(-1);
    for (let boundary = this.bucketMs; !this.stopped; boundary += this.bucketMs) {
      await this.clock.sleepUntil(boundary, this.halt.signal);
      if (this.stopped) break;
      if (this.clock.now() > boundary + this.bucketMs) continue; // fell behind: skip
      this.sample(boundary / this.bucketMs - 1);
    }
  }

  /** Reads every process once and records the bucket that ends now. */
  sample(bucket: number): void {
    const procs = this.processes();
    const usage = this.read(procs.map((p) => p.pid));
    const next = new Map<string, { pid: number; usage: ProcUsage }>();
    for (const p of procs) {
      const u = usage.get(p.pid);
      if (!u) continue;
      const name = processName(p);
      next.set(name, { pid: p.pid, usage: u });
      if (bucket < 0) continue;
      const prev = this.last.get(name);
      const cpu = prev && prev.pid === p.pid ? Math.max(0, u.cpuSeconds - prev.usage.cpuSeconds) : null;
      setAt((this.series[`proc_${name}_cpu`] ??= []), bucket, cpu);
      setAt((this.series[`proc_${name}_rss_bytes`] ??= []), bucket, u.rssBytes);
      setAt((this.series[`proc_${name}_anon_bytes`] ??= []), bucket, u.anonBytes);
    }
    this.last = next;
  }

  async stop(): Promise<Record<string, (number | null)[]>> {
    this.stopped = true;
    this.halt.abort();
    await this.loop;
    return this.series;
  }
}

function setAt(arr: (number | null)[], i: number, v: number | null): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}
