import type { RequestClass } from '../../bench/workload/mix.js';
import { DEFAULT_CLASS } from '../../bench/workload/mix.js';
import { SHAPE_NAMES, shapeOf, type ArrivalPlan, type ShapeName } from './arrivals/index.js';
import type { ArrivalContext, PlannedArrival } from './arrivals/kind.js';
import type { LoadSpec } from './sections/load.js';
import type { RateSpec } from '../../foundation/units.js';

export type { ArrivalPlan } from './arrivals/index.js';
export { resolveRate } from './arrivals/kind.js';

export interface LoadPlan extends PlannedArrival<ArrivalPlan> {
  readonly mix: readonly RequestClass[];
}

export type LoadContext = ArrivalContext;

/** The one shape the load declares (the schema refuses none or several). */
function shapeGiven(l: LoadSpec): ShapeName {
  return SHAPE_NAMES.find((k) => l[k] !== undefined)!;
}

/**
 * Resolves the load section: the declared shape by its kind (arrivals/), and the mix.
 * `--scale` shrinks phase, wave and on/off durations like the schedule (the rates stay
 * as declared).
 */
export function planLoad(l: LoadSpec, ctx: LoadContext): LoadPlan {
  const mix: RequestClass[] = l.mix
    ? l.mix.map((c) => ({
        name: c.name,
        share: c.share,
        method: c.method,
        path: c.path,
        bodyBytes: c.body,
        ...(c.key ? { key: c.key } : {}),
        ...(c.cost ? { cost: c.cost } : {}),
        ...(c.cancel ? { cancel: c.cancel } : {}),
      }))
    : [DEFAULT_CLASS];
  const k = shapeGiven(l);
  return { ...shapeOf(k).plan(l[k], l.arrival, ctx), mix };
}

/** One line saying what load the experiment declares, for reports and --dry-run. */
export function describeLoad(l: LoadSpec): string {
  const r = (x: RateSpec): string =>
    'perS' in x ? `${+x.perS.toFixed(3)}/s` : `${+(x.capacityFraction * 100).toFixed(3)}% of capacity`;
  const mix = l.mix
    ? `; mix ${l.mix.map((c) => `${c.name} ${+(c.share * 100).toFixed(2)}%`).join(', ')}`
    : '';
  const k = shapeGiven(l);
  return `${shapeOf(k).describe(l[k], l.arrival, r)}${mix}`;
}

/** What the load is, when a load spike cannot multiply it; undefined when it can. */
export function notSpikeable(l: LoadSpec): string | undefined {
  return shapeOf(shapeGiven(l)).notSpikeable(l[shapeGiven(l)]);
}
