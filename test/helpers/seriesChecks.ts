import assert from 'node:assert/strict';
import { median } from 'simple-statistics';
import { sum, type Row } from './experiment.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

// Series helpers the reproduction suite's catalogue files share.

/** Whole seconds of the series inside the trigger window. */
export function triggerSeconds(s: RunSummary): [number, number] {
  return [Math.ceil(s.trigger.startS), Math.floor(s.trigger.endS)];
}

export function baselineGoodput(s: RunSummary): number {
  assert.ok(s.baseline.goodputPerS !== null && s.baseline.goodputPerS > 0, 'a baseline goodput');
  return s.baseline.goodputPerS;
}

/** Mean goodput per second inside the trigger window. */
export function goodputDuringTrigger(s: RunSummary, rows: Row[]): number {
  const [a, b] = triggerSeconds(s);
  return sum(rows, 'goodput', a, b) / (b - a);
}

export function numbers(rows: Row[], col: string): number[] {
  return rows.map((r) => r[col]).filter((v): v is number => typeof v === 'number');
}

export function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Cache hit ratio over the seconds [fromS, toS) from the api's counters. */
export function hitRatio(rows: Row[], fromS: number, toS: number): number {
  const h = sum(rows, 'cache_hits', fromS, toS);
  return h / Math.max(1, h + sum(rows, 'cache_misses', fromS, toS));
}

/**
 * A memory series' level in its first, middle and last thirds, as medians. A
 * garbage-collected heap rises and falls by a fifth or more between major collections
 * with no trend (the api at full scale: 116–142 MB over 6 min), so peaks measure when the
 * collector ran; the median follows the level a leak raises. A leak keeps growing: the
 * soak compares the last third with the middle one, since a disturbance early in the run
 * (the trigger's burst of queued requests) can raise a heap's committed memory once (V8
 * keeps it) without any growth after (the api in CI: 78 MB in the baseline, 114 MB flat
 * for the last 30 s).
 */
export function memoryLevels(values: readonly number[]): { first: number; middle: number; last: number } {
  const third = Math.floor(values.length / 3);
  assert.ok(third > 0, `a memory series of ${values.length} samples has no thirds`);
  return {
    first: median(values.slice(0, third)),
    middle: median(values.slice(third, values.length - third)),
    last: median(values.slice(values.length - third)),
  };
}
