import assert from 'node:assert/strict';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';
import { experimentPath } from './catalogue.js';
import { sum, type Row } from './experiment.js';

// The catalogue's message-loss rows (issue 35, point 5), checked the same way on the lab
// (test/repro/loss.test.ts) and in simulation: bounds derived from the loss probability.

/** The loss probability of experiments/NAME.yaml's one trigger. */
export function lossProbability(name: string): number {
  const t = loadExperimentFile(experimentPath(name)).schedule.triggers[0]!;
  assert.equal(t.kind, 'loss', `${name}: a loss trigger`);
  return (t as { probability: number }).probability;
}

/** A column's rate over whole seconds [from, to). */
export function perS(rows: Row[], col: string, w: Window): number {
  return sum(rows, col, w[0], w[1]) / (w[1] - w[0]);
}

/** Whole seconds [from, to). */
export type Window = readonly [number, number];

/**
 * A loss run's windows: the baseline; the loss in its steady state, from `settleS` after it
 * began (when the retries of the first lost attempts have gone out) to its end; after it,
 * from `afterS` after its end (when its stalled connections are replaced) to the run's end.
 */
export function lossWindows(
  s: { readonly trigger?: { startS: number; endS: number } | null; readonly baseline: { seconds: number } },
  rows: Row[],
  settleS: number,
  afterS: number,
): { base: Window; loss: Window; after: Window } {
  const t = s.trigger!;
  const observeEnd =
    1 + Math.max(...rows.filter((r) => r['phase'] === 'observe').map((r) => r['t_s'] as number));
  return {
    base: [Math.ceil(t.startS) - Math.floor(s.baseline.seconds), Math.floor(t.startS)],
    loss: [Math.ceil(t.startS) + settleS, Math.floor(t.endS)],
    after: [Math.ceil(t.endS) + afterS, observeEnd],
  };
}

/**
 * The retries a loss causes, in a window where it is steady: each attempt lost with p is
 * retried until maxAttempts, so an origin costs 1 + p + … + p^(maxAttempts−1) attempts.
 * The retries are a count, whose Poisson noise (3 standard deviations) widens the bounds;
 * the lower bound is 1 + p (the later terms need their own timeouts to come round).
 * Returns the attempts per origin measured.
 */
export function assertLossAmplification(
  rows: Row[],
  w: Window,
  p: number,
  maxAttempts: number,
  cols: { readonly origins: string; readonly attempts: string },
  msg: string,
): number {
  const origins = sum(rows, cols.origins, ...w);
  const attempts = sum(rows, cols.attempts, ...w);
  const noise = (3 * Math.sqrt(Math.max(attempts - origins, 1))) / origins;
  let expected = 0;
  for (let i = 0; i < maxAttempts; i++) expected += p ** i;
  const perOrigin = attempts / origins;
  assert.ok(
    perOrigin > 1 + p - noise && perOrigin < expected + noise,
    `${perOrigin.toFixed(3)} ${cols.attempts} per ${cols.origins}, expected ${(1 + p).toFixed(3)} to ${expected.toFixed(3)} ± ${noise.toFixed(3)}; ${msg}`,
  );
  return perOrigin;
}
