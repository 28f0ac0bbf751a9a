/**
 * Where a V8 CPU profile (node --cpu-prof) spent its time: self time summed by source
 * file and by function, the largest first, for a benchmark's results file when a goal
 * is missed.
 */
interface CpuProfile {
  readonly nodes: readonly {
    readonly id: number;
    readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  }[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  readonly totalMs: number;
  /** [file, ms], largest first. */
  readonly byFile: readonly (readonly [string, number])[];
  /** [function file:line, ms], largest first. */
  readonly byFunction: readonly (readonly [string, number])[];
}

/** Our files relative to dist/, dependencies by package path, V8's own entries by name. */
const shortUrl = (url: string): string =>
  url === ''
    ? '(native)'
    : url.includes('/node_modules/')
      ? url.replace(/.*\/node_modules\//, 'node_modules/')
      : url.replace(/.*\/dist\//, '');

export function selfTime(profile: CpuProfile, top = 15): SelfTime {
  const byId = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const us = new Map<number, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    us.set(id, (us.get(id) ?? 0) + dt);
    total += dt;
  });
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, t] of us) {
    const f = byId.get(id);
    if (!f) continue;
    const file = shortUrl(f.url);
    const fn = `${f.functionName || '(anonymous)'} ${file}${f.url ? `:${f.lineNumber + 1}` : ''}`;
    byFile.set(file, (byFile.get(file) ?? 0) + t);
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + t);
  }
  const largest = (m: Map<string, number>): [string, number][] =>
    [...m]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, top)
      .map(([k, v]) => [k, v / 1000]);
  return { totalMs: total / 1000, byFile: largest(byFile), byFunction: largest(byFunction) };
}
