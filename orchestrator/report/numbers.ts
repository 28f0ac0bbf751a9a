/**
 * How a report's tables print measured values: three significant figures (277.917/s →
 * 278/s, 16.847 ms → 16.8 ms, 0.8212 → 0.821), with thousands separated and trailing zeros kept, so a table
 * reads at a glance; the raw values stay in summary.json and the CSV files. Counts
 * (samples, seconds, runs) are exact and never go through here.
 */
export function sig3(x: number, grouping = true): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const v = Number(x.toPrecision(3));
  // Decimals to the third significant figure, trailing zeros kept (1.00: measured to three figures).
  const decimals = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(v))));
  // Without grouping for LaTeX's \num (siunitx groups digits itself and reads a comma as the decimal mark).
  return formatter(decimals, grouping).format(v);
}

/**
 * toLocaleString's formatter, made once per (decimals, grouping): toLocaleString builds an
 * Intl.NumberFormat on every call (the better part of a report's number formatting).
 */
const formatters = new Map<number, Intl.NumberFormat>();
function formatter(decimals: number, grouping: boolean): Intl.NumberFormat {
  const key = decimals * 2 + (grouping ? 1 : 0);
  let f = formatters.get(key);
  if (!f)
    formatters.set(
      key,
      (f = new Intl.NumberFormat('en-US', {
        maximumFractionDigits: decimals,
        minimumFractionDigits: decimals,
        useGrouping: grouping,
      })),
    );
  return f;
}

/** A measured value with its unit, or "unmeasured"; `unit` is appended as written ("/s", " ms"). */
export function withUnit(x: number | null | undefined, unit: string): string {
  return x === null || x === undefined ? 'unmeasured' : `${sig3(x)}${unit}`;
}

/** A hypothesis metric's value as its threshold reads it: goodput and error ratio in %, latencies in ms. */
export function hypothesisValue(metric: string, value: number | null): string {
  if (value === null) return '–';
  if (metric === 'goodput') return `${sig3(value * 100)}% of offered`;
  if (metric === 'errorRatio') return `${sig3(value * 100)}%`;
  return `${sig3(value)} ms`;
}
