import assert from 'node:assert/strict';
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
