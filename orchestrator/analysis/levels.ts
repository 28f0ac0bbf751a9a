import { parseDuration, parsePercent, parseRate } from '../../foundation/units.js';

/** A factor value as the sweep table holds it: a number, or the text written in the sweep file. */
export type Level = string | number;

/**
 * How a sweep factor's values read as numbers, when they all do: bare numbers as they
 * are; rates and durations written with units ("20% capacity", "280/s", "500ms", "2s")
 * in one unit, so a figure can put them on a numeric, sorted axis. `unit` is null for
 * bare numbers. Null when any value is not a number of one kind (true/false, a policy
 * name, a rate in /s beside one in % capacity).
 */
export interface NumericLevels {
  readonly unit: string | null;
  readonly value: (v: Level) => number;
}

type Reader = { unit: string; read: (v: string) => number | null };

const READERS: readonly Reader[] = [
  {
    unit: '% capacity',
    read: (v) => {
      const r = parseRate(v);
      return r.ok && 'capacityFraction' in r.value ? round6(r.value.capacityFraction * 100) : null;
    },
  },
  {
    unit: 'req/s',
    read: (v) => {
      const r = parseRate(v);
      return r.ok && 'perS' in r.value ? round6(r.value.perS) : null;
    },
  },
  {
    unit: 'ms',
    read: (v) => {
      const r = parseDuration(v);
      return r.ok ? r.value : null;
    },
  },
  {
    unit: '%',
    read: (v) => {
      const r = parsePercent(v);
      return r.ok ? round6(r.value * 100) : null;
    },
  },
];

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

export function numericLevels(values: readonly (Level | undefined)[]): NumericLevels | null {
  const vs = values.filter((v): v is Level => v !== undefined);
  if (vs.length === 0) return null;
  if (vs.every((v) => typeof v === 'number')) return { unit: null, value: (v) => Number(v) };
  if (!vs.every((v) => typeof v === 'string')) return null;
  for (const r of READERS) {
    if (vs.every((v) => r.read(v as string) !== null)) {
      // Durations all in whole seconds read better in s.
      const seconds = r.unit === 'ms' && vs.every((v) => r.read(v as string)! % 1000 === 0);
      return seconds
        ? { unit: 's', value: (v) => r.read(String(v))! / 1000 }
        : { unit: r.unit, value: (v) => r.read(String(v))! };
    }
  }
  return null;
}

/**
 * The distinct levels of a factor in order: numerically when they read as numbers, else
 * as first met (the order the sweep file lists them).
 */
export function sortedLevels(values: readonly (Level | undefined)[]): Level[] {
  const distinct = [...new Set(values.filter((v): v is Level => v !== undefined))];
  const n = numericLevels(distinct);
  return n ? distinct.sort((a, b) => n.value(a) - n.value(b)) : distinct;
}

/** Compares two rows of factor values, factor by factor, each by its levels' order. */
export function compareByLevels(
  factors: readonly string[],
  all: readonly Readonly<Record<string, Level>>[],
): (a: Readonly<Record<string, Level>>, b: Readonly<Record<string, Level>>) => number {
  const orders = new Map(
    factors.map((f) => {
      const levels = sortedLevels(all.map((r) => r[f]));
      return [f, new Map(levels.map((l, i) => [l, i]))] as const;
    }),
  );
  return (a, b) => {
    for (const f of factors) {
      const o = orders.get(f)!;
      const d = (o.get(a[f]!) ?? -1) - (o.get(b[f]!) ?? -1);
      if (d !== 0) return d;
    }
    return 0;
  };
}
