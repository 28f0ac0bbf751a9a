import { readFileSync } from 'node:fs';

/**
 * CPU affinity as Linux reports it: the Cpus_allowed_list of /proc/<pid>/status ("0-3,6"),
 * and the split of a process's CPUs between the load generator and the lab (DESIGN.md:
 * the generator must not compete with the system it measures).
 */

/** What manifest.json records of the CPU pinning: applied (and which CPUs), or why not. */
export type Pinning =
  | {
      readonly applied: true;
      /** The orchestrator's own process (every thread): the generator, the waker, the scraper. */
      readonly generatorCpus: readonly number[];
      /** Every process the lab starts (the api, Redis, Postgres and its backends, the fault proxy, the stub). */
      readonly labCpus: readonly number[];
      /** What the orchestrator was allowed before (and is given back when the lab is down). */
      readonly allowedCpus: readonly number[];
    }
  | { readonly applied: false; readonly reason: string; readonly allowedCpus?: readonly number[] };

/** "0-3,6" → [0, 1, 2, 3, 6] (sorted, no duplicates); throws on anything else. */
export function parseCpuList(text: string): number[] {
  const s = text.trim();
  if (s === '') return [];
  const cpus = new Set<number>();
  for (const part of s.split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) throw new Error(`not a CPU list: "${text}"`);
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    if (to < from) throw new Error(`not a CPU list: "${text}" (range ${part} runs backwards)`);
    for (let c = from; c <= to; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** [0, 1, 2, 3, 6] → "0-3,6", the form taskset -c and Cpus_allowed_list use. */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/** The Cpus_allowed_list line of a /proc/<pid>/status (or /proc/<pid>/task/<tid>/status) text. */
export function cpusAllowedOf(status: string): number[] {
  const m = /^Cpus_allowed_list:\s*(.*)$/m.exec(status);
  if (!m) throw new Error('no Cpus_allowed_list line in the status text');
  return parseCpuList(m[1]!);
}

/** The CPUs a process (`self`: this one's main thread) or a thread (`pid/task/tid`) may run on. */
export function allowedCpus(pid: number | string = 'self'): number[] {
  return cpusAllowedOf(readFileSync(`/proc/${pid}/status`, 'utf8'));
}

/**
 * The generator's and the lab's CPUs out of `allowed`, or undefined below 2. The generator
 * is one Node process whose event loop does nearly all its work (its waker and libuv
 * threads are mostly asleep), so a quarter of the CPUs, at least one, is enough; the lab
 * runs several processes (api replicas, Postgres's backends, Redis, the fault proxy)
 * and gets the rest. The generator takes the last CPUs: CPU 0 is where many machines
 * steer device interrupts and housekeeping, which the generator's timing is most
 * sensitive to.
 */
export function splitCpus(allowed: readonly number[]): { generator: number[]; lab: number[] } | undefined {
  const cpus = [...new Set(allowed)].sort((a, b) => a - b);
  if (cpus.length < 2) return undefined;
  const g = Math.max(1, Math.floor(cpus.length / 4));
  return { generator: cpus.slice(cpus.length - g), lab: cpus.slice(0, cpus.length - g) };
}
