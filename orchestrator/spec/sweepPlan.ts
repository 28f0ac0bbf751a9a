import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';

/** A factor of a sweep: a field of the experiment (dotted path) and the values it takes. */
export interface Factor {
  readonly path: string;
  readonly values: readonly unknown[];
  /** Its value at the reference point (one-at-a-time designs). */
  readonly reference: unknown;
}

export type Design = 'one-at-a-time' | 'factorial';

/** One point of a sweep: the value of every factor, and which factor it moves (one-at-a-time). */
export interface SweepPoint {
  /** 1-based; its results go to point-<index>/. */
  readonly index: number;
  /** The factor moved away from the reference point; absent for the reference point and in factorial designs. */
  readonly varied?: string;
  readonly values: Readonly<Record<string, unknown>>;
}

/**
 * The points of a sweep, in a stable order.
 *   one-at-a-time: the reference point first, then for each factor in turn each of its
 *     values other than the reference, the other factors held at their reference.
 *   factorial: every combination, the last factor varying fastest.
 */
export function planPoints(design: Design, factors: readonly Factor[]): SweepPoint[] {
  const points: Omit<SweepPoint, 'index'>[] = [];
  if (design === 'one-at-a-time') {
    const ref = Object.fromEntries(factors.map((f) => [f.path, f.reference]));
    points.push({ values: ref });
    for (const f of factors)
      for (const v of f.values)
        if (!isDeepStrictEqual(v, f.reference))
          points.push({ varied: f.path, values: { ...ref, [f.path]: v } });
  } else {
    let combos: Record<string, unknown>[] = [{}];
    for (const f of factors) combos = combos.flatMap((c) => f.values.map((v) => ({ ...c, [f.path]: v })));
    points.push(...combos.map((values) => ({ values })));
  }
  return points.map((p, i) => ({ index: i + 1, ...p }));
}

/**
 * A point is complete when its folder holds the experiment's summary.json and the
 * summary of each of its `repeat` runs: runExperiment writes the top summary last.
 */
export function isPointComplete(dir: string, repeat: number): boolean {
  if (!existsSync(join(dir, 'summary.json'))) return false;
  for (let i = 1; i <= repeat; i++) if (!existsSync(join(dir, `run-${i}`, 'summary.json'))) return false;
  return true;
}

/** The points still to run: those whose folder under `sweepDir` is not complete. */
export function pendingPoints(sweepDir: string, points: readonly SweepPoint[], repeat: number): SweepPoint[] {
  return points.filter((p) => !isPointComplete(pointDir(sweepDir, p), repeat));
}

export function pointDir(sweepDir: string, p: SweepPoint): string {
  return join(sweepDir, `point-${p.index}`);
}

/** Folders of points that were started and not finished (to move aside before rerunning). */
export function incompletePointDirs(
  sweepDir: string,
  points: readonly SweepPoint[],
  repeat: number,
): string[] {
  if (!existsSync(sweepDir)) return [];
  const names = new Set(readdirSync(sweepDir));
  return points
    .filter((p) => names.has(`point-${p.index}`) && !isPointComplete(pointDir(sweepDir, p), repeat))
    .map((p) => pointDir(sweepDir, p));
}
