import { bistableRange, healthyState, type FluidSystem } from './fluid.js';

/**
 * The fluid model's boundary over a trigger's magnitude (metabench model --magnitudes):
 * does a trigger of this size, lasting D seconds at offered load λ, leave the api collapsed?
 *
 * Capacity degradation to cμ' for D seconds (slowdown by k: cμ/k, since the work that
 * starts in the window takes k times as long; workers shrunk to n: n·μ) at origin rate λ.
 * The fluid backlog B (jobs queued) grows while the attempts offered exceed cμ':
 *
 * - phase 1, while the queue wait B/cμ' is under the timeout τ: attempts arrive at the
 *   healthy rate Λ_h (healthyState: λ plus its rare retries), B grows at Λ_h − cμ';
 * - phase 2, once B ≥ cμ'·τ: every attempt times out and is retried, so the api is offered
 *   the collapsed state's m·λ, and B grows at m·λ − cμ'.
 *
 * When the trigger ends the api is back at cμ and its queue wait is B/cμ. The system tips
 * into the collapsed state when that wait is at least τ (B ≥ cμ·τ): every new attempt then
 * times out, the api receives m·λ, and it stays collapsed when m·λ ≥ cμ (λ at or above the
 * lower edge cμ/m). The work queued at the end is drawn at its start, after the window, so it
 * takes the healthy time (the simulated and real api scale work as it starts).
 *
 * A load spike ×f keeps cμ and offers f·Λ_h (phase 2 starts only at B = cμ·τ, which is
 * already the tipping point). Message loss is not predicted: a lost message stalls its
 * connection until the client's timeout, which the fluid model of a queue does not hold.
 *
 * Limits, written down: phase 1 uses the mean wait; in a stochastic queue the wait's tail
 * passes τ before its mean does, so the simulation tips at somewhat smaller triggers than
 * this predicts near the boundary. The switch to m·λ at phase 2 is instant here; the real
 * retries arrive over (m − 1)·τ. Below cμ/m every trigger is survived; above λ* there is
 * no healthy state and no trigger is needed.
 */

/** How a kind's magnitude changes the api, in the model's terms. */
export type MagnitudeEffect =
  | { readonly kind: 'slowdown'; readonly factor: number }
  | { readonly kind: 'workers'; readonly to: number }
  | { readonly kind: 'load-spike'; readonly factor: number };

export type PredictedCell =
  | { readonly verdict: 'metastable' | 'recovered'; readonly why: string; readonly backlog: number }
  | { readonly verdict: null; readonly why: string };

/** The kinds whose magnitude the model predicts over, and the field each varies. */
export const PREDICTED_MAGNITUDES: Readonly<Record<string, string>> = {
  slowdown: 'factor',
  workers: 'to',
  'load-spike': 'factor',
};

/** A trigger's effect from its kind and magnitude; null when the model does not predict it. */
export function effectOf(kind: string, value: number): MagnitudeEffect | null {
  if (kind === 'slowdown') return { kind, factor: value };
  if (kind === 'workers') return { kind, to: value };
  if (kind === 'load-spike') return { kind, factor: value };
  return null;
}

/** The fluid backlog (jobs) at the trigger's end; 0 when the degraded api keeps up. */
export function backlogAtEnd(
  sys: FluidSystem,
  originsPerS: number,
  t: MagnitudeEffect,
  durationS: number,
): number {
  const capacity = (sys.workers / sys.work.meanMs) * 1000;
  const tauS = sys.timeoutMs / 1000;
  const healthy = healthyState(sys, originsPerS)?.attemptsPerS ?? originsPerS;
  const degraded =
    t.kind === 'slowdown'
      ? capacity / t.factor
      : t.kind === 'workers'
        ? (t.to / sys.work.meanMs) * 1000
        : capacity;
  const spike = t.kind === 'load-spike' ? t.factor : 1;
  const in1 = healthy * spike;
  const in2 = sys.attempts * originsPerS * spike;
  if (!(in1 > degraded)) return 0;
  const t1 = (degraded * tauS) / (in1 - degraded);
  return durationS <= t1
    ? (in1 - degraded) * durationS
    : degraded * tauS + (in2 - degraded) * (durationS - t1);
}

/** The model's verdict for one cell: a trigger of this size for D seconds at λ origins/s. */
export function predictCell(
  sys: FluidSystem,
  originsPerS: number,
  t: MagnitudeEffect | null,
  durationS: number,
): PredictedCell {
  if (!t) return { verdict: null, why: 'the fluid model does not predict this trigger kind' };
  const range = bistableRange(sys);
  const capacity = range.capacityPerS;
  if (originsPerS < range.lowerPerS)
    return { verdict: 'recovered', why: 'below cμ/m: the collapsed state cannot last', backlog: 0 };
  if (originsPerS >= range.upperPerS)
    return {
      verdict: 'metastable',
      why: 'above λ*: no healthy state, collapsed without a trigger',
      backlog: 0,
    };
  const backlog = backlogAtEnd(sys, originsPerS, t, durationS);
  const needed = (capacity * sys.timeoutMs) / 1000;
  return backlog >= needed
    ? { verdict: 'metastable', why: `backlog ${round1(backlog)} ≥ cμ·τ = ${round1(needed)}`, backlog }
    : { verdict: 'recovered', why: `backlog ${round1(backlog)} < cμ·τ = ${round1(needed)}`, backlog };
}

/**
 * The predicted boundary at one load: the least slowdown or spike factor that tips (to 0.1%),
 * or the largest pool that does; null when none in the kind's range tips, or the model does
 * not predict it. `always`/`never`: the load's region decides whatever the magnitude.
 */
export function boundaryAt(
  sys: FluidSystem,
  originsPerS: number,
  kind: string,
  durationS: number,
): { readonly value: number | null; readonly region: 'stable' | 'bistable' | 'unstable' } | null {
  if (!(kind in PREDICTED_MAGNITUDES)) return null;
  const range = bistableRange(sys);
  const region =
    originsPerS < range.lowerPerS ? 'stable' : originsPerS < range.upperPerS ? 'bistable' : 'unstable';
  if (region !== 'bistable') return { value: null, region };
  const tips = (v: number): boolean =>
    predictCell(sys, originsPerS, effectOf(kind, v), durationS).verdict === 'metastable';
  if (kind === 'workers') {
    for (let n = sys.workers - 1; n >= 1; n--) if (tips(n)) return { value: n, region };
    return { value: null, region };
  }
  // Factors: tipping is monotone in the factor (more work or more load, a larger backlog).
  let hi = 1000;
  if (!tips(hi)) return { value: null, region };
  let lo = kind === 'slowdown' ? 1 : 0;
  while (hi - lo > 1e-3 * hi) {
    const mid = (lo + hi) / 2;
    if (tips(mid)) hi = mid;
    else lo = mid;
  }
  // Rounded up, so the value given still tips.
  return { value: Math.ceil(hi * 1000) / 1000, region };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** The model over a map's magnitude axis: the boundary at each load and the verdict at each cell. */
export interface MagnitudeModel {
  readonly kind: string;
  readonly field: string;
  /** The trigger's duration (after the scale), seconds. */
  readonly durationS: number;
  /** Why the model gives no boundary (loss, replicas); absent when it does. */
  readonly notPredicted?: string;
  readonly loads: readonly {
    readonly load: number;
    readonly region: 'stable' | 'bistable' | 'unstable';
    /** The least factor (the largest pool) that tips; null when none does, or the region decides. */
    readonly boundary: number | null;
  }[];
  readonly cells: readonly {
    readonly load: number;
    readonly magnitude: number;
    readonly verdict: 'metastable' | 'recovered' | null;
    readonly why: string;
  }[];
}

export function magnitudeModel(
  sys: FluidSystem,
  replicas: number,
  kind: string,
  field: string,
  loads: readonly number[],
  magnitudes: readonly number[],
  durationS: number,
): MagnitudeModel {
  const notPredicted = !(kind in PREDICTED_MAGNITUDES)
    ? `the fluid model does not predict ${kind}: ${kind === 'loss' ? "a lost message stalls its connection until the client's timeout, which the model of a queue does not hold" : 'it has no term for it'}`
    : replicas > 1
      ? 'the model of a capacity trigger over api replicas is not written (it is of one api)'
      : undefined;
  if (notPredicted)
    return {
      kind,
      field,
      durationS,
      notPredicted,
      loads: [],
      cells: loads.flatMap((load) =>
        magnitudes.map((magnitude) => ({ load, magnitude, verdict: null, why: notPredicted })),
      ),
    };
  return {
    kind,
    field,
    durationS,
    loads: loads.map((load) => {
      const b = boundaryAt(sys, load, kind, durationS)!;
      return { load, region: b.region, boundary: b.value };
    }),
    cells: loads.flatMap((load) =>
      magnitudes.map((magnitude) => {
        const c = predictCell(sys, load, effectOf(kind, magnitude), durationS);
        return { load, magnitude, verdict: c.verdict, why: c.why };
      }),
    ),
  };
}

/** The model's verdict at a cell of the map (null where it has none). */
export function predictedAt(
  m: MagnitudeModel,
): (load: number, magnitude: number) => 'metastable' | 'recovered' | null {
  return (load, magnitude) =>
    m.cells.find((c) => Math.abs(c.load - load) <= 1e-9 * Math.max(1, load) && c.magnitude === magnitude)
      ?.verdict ?? null;
}

/** The predicted boundary in words (markdown lines): one per load, or why there is none. */
export function boundaryLines(m: MagnitudeModel): string[] {
  const head = `predicted boundary (fluid model, trigger ${m.durationS} s):`;
  if (m.notPredicted) return [`${head} none: ${m.notPredicted}`];
  const word = m.kind === 'workers' ? 'tips at a pool of' : 'tips from';
  const unit = m.kind === 'workers' ? (n: number) => `${n} workers or fewer` : (f: number) => `${f}x`;
  return [
    head,
    ...m.loads.map(
      (l) =>
        `- ${l.load} origins/s: ${
          l.region === 'stable'
            ? 'stable (below cμ/m): every magnitude is survived'
            : l.region === 'unstable'
              ? 'unstable (above λ*): collapsed without a trigger'
              : l.boundary === null
                ? `no ${m.field} in the kind's range tips it`
                : `${word} ${unit(l.boundary)}`
        }`,
    ),
  ];
}
