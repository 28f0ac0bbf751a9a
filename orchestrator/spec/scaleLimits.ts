import { expectedOrigins } from './arrivals/index.js';
import { meanWorkMs, type RunPlan } from './plan.js';
import { triggerWindowMs } from './sections/schedule.js';
import { triggerKind } from '../trigger/registry.js';
import {
  constantsTriggerOutlasts,
  GOODPUT_BUCKET_MS,
  MIN_TREND_MS,
  originLifeMs,
  timeConstants,
  type TimeConstant,
} from './timeConstants.js';

/**
 * The limits of `--scale` (DESIGN.md §2 "Scale" and "Recovery criterion limits"): each
 * scaled duration of the file that must stay at least some bound, the bound being a
 * non-scaling time constant (times a margin) or the noise and relaxation of the goodput
 * the recovery criterion reads. A scale below a limit is a different experiment, or a
 * criterion that cannot be met reliably: validation refuses it (refuseScale.ts) and names
 * the smallest scale the file accepts.
 *
 * Two kinds of limit:
 * - `order`: the scaled duration outlasted the constant at scale 1; shrinking it below
 *   changes which comes first, so the scale changes the experiment. Where the duration is
 *   already below the bound at scale 1, scaling keeps the order and there is no limit.
 * - `floor`: the criterion needs this much at any scale, scale 1 included (a tolerance
 *   under the noise floor, a window shorter than the api's relaxation).
 */
export interface ScaleLimit {
  readonly kind: 'order' | 'floor';
  /** The scaled duration, in words (`trigger pause api`, `recovery window`). */
  readonly what: string;
  /** Its field in the file (YAML path, for the line), e.g. ['schedule','trigger','duration']. */
  readonly path: readonly (string | number)[];
  /** The duration as declared (scale 1), ms. */
  readonly declaredMs: number;
  /** The least the scaled duration may be, ms. */
  readonly boundMs: number;
  /** What the bound is: the constant and its margin, in words. */
  readonly bound: string;
  /** The smallest scale the limit accepts: boundMs / declaredMs (> 1: no scale does). */
  readonly minScale: number;
  /** For the noise floor: the planned goodput it was computed at, per s. */
  readonly goodputPerS?: number;
}

/**
 * Margins, and why:
 * - A trigger outlasts a constant it acts through (a timeout, a retry wait) by 2×: an
 *   origin caught at offset x into a trigger of length D waits D − x, so with D ≥ 2C at
 *   least half of the trigger's origins outlast C, as at scale 1 most do.
 * - A trigger lasts at least a breaker's window (the breaker's failure ratio over a window
 *   longer than the trigger is diluted by D / window) and a cache TTL (every key filled
 *   before it expires within it).
 * - The hold lasts at least the breaker's open time (a breaker that reopens is seen) and
 *   the longest origin (the origins the collapse left have resolved before recovery is
 *   called).
 * - The recovery deadline k × D is at least two goodput buckets: recovered and
 *   recovered-late are told apart on whole-second buckets.
 * - The observation's last third (the tail the trend test reads) is at least
 *   TREND_TAIL_MARGIN × the test's shortest tail: it reads 10 s, but telling a slow drain
 *   from a plateau took twice that (sim/catalogueScale.test.ts: cache-stampede's cold
 *   cache, a plateau, read as recovering at an 18 s tail in 2 of 3 seeds, at 20 s in none).
 * - The window and the hold are at least RELAXATION_RESPONSES mean response times (the
 *   api's own relaxation: a window shorter averages the queue's transient, not its state),
 *   and the window at least one goodput bucket.
 * - The tolerance is at least the noise floor NOISE_SDS/√(G × W): G × W successes are
 *   expected in a window, Poisson, so their relative standard deviation is 1/√(GW).
 */
export const TRIGGER_MARGIN = 2;
export const TREND_TAIL_MARGIN = 2;
export const RELAXATION_RESPONSES = 5;
export const NOISE_SDS = 3;

/** The baseline goodput the plan expects, per s: the offered rate in the baseline, at most the capacity. */
export function plannedGoodputPerS(plan: RunPlan): number {
  const a = plan.load.arrival;
  // A system never calibrated: no capacity bounds what the plan offers.
  const cap = plan.capacity.usedPerS ?? Number.POSITIVE_INFINITY;
  if (a.kind === 'closed') {
    if (!plan.experiment.lab) return Math.min(cap, a.users / (a.think.meanMs / 1000));
    // Each user cycles through a think time and a response (at least the mean work).
    const cycleS = (a.think.meanMs + meanWorkMs(plan.experiment)) / 1000;
    return Math.min(cap, a.users / cycleS);
  }
  const b = plan.phases.baseline;
  const n = expectedOrigins(a, b);
  const rate = n === null || b.endMs <= b.startMs ? plan.ratePerS : n / ((b.endMs - b.startMs) / 1000);
  return Math.min(cap, rate);
}

/**
 * The api's mean response time at the planned load, S / (1 − ρ): the M/M/1 response
 * time at the same utilisation, an upper bound for c workers (Kleinrock 1975, §3.2 and
 * §3.5: M/M/c waits less than M/M/1 at the same ρ), so the relaxation limit errs long.
 */
export function meanResponseMs(plan: RunPlan): number | null {
  // Your own system's work is not declared: no response time to bound the criterion by.
  if (!plan.experiment.lab || plan.capacity.usedPerS === null) return null;
  const rho = Math.min(0.95, plannedGoodputPerS(plan) / plan.capacity.usedPerS);
  return meanWorkMs(plan.experiment) / (1 - rho);
}

/** Every limit `--scale` has for this plan's experiment (the plan's own scale does not matter). */
export function scaleLimits(plan: RunPlan): ScaleLimit[] {
  const e = plan.experiment;
  const s = e.schedule;
  const out: ScaleLimit[] = [];
  const add = (
    kind: ScaleLimit['kind'],
    what: string,
    path: readonly (string | number)[],
    declaredMs: number,
    boundMs: number,
    bound: string,
    goodputPerS?: number,
  ): void => {
    if (kind === 'order' && declaredMs < boundMs) return;
    out.push({
      kind,
      what,
      path,
      declaredMs,
      boundMs,
      bound,
      minScale: boundMs / declaredMs,
      ...(goodputPerS !== undefined ? { goodputPerS } : {}),
    });
  };
  const byName = (from: string): TimeConstant | undefined => timeConstants(e).find((c) => c.from === from);

  s.triggers.forEach((t, i) => {
    // An instant trigger (a flush) acts at once: its duration only sets the deadline.
    if (triggerKind(t.kind).instant) return;
    const path = [
      'schedule',
      ...(s.writtenAs === 'trigger' ? ['trigger'] : ['triggers', i]),
      'duration',
    ] as const;
    const what = `trigger ${t.kind}`;
    for (const c of constantsTriggerOutlasts(e, t))
      add(
        'order',
        what,
        path,
        t.duration,
        TRIGGER_MARGIN * c.ms,
        `${TRIGGER_MARGIN} × the ${c.name} (${c.from})`,
      );
    const bw = byName('client.breaker.window');
    if (bw) add('order', what, path, t.duration, bw.ms, `the ${bw.name} (${bw.from})`);
    const ttl = byName('lab.cache.ttl');
    if (ttl) add('order', what, path, t.duration, ttl.ms, `the ${ttl.name} (${ttl.from})`);
  });

  const r = e.recovery;
  const holdPath = ['recovery', 'hold'] as const;
  const open = byName('client.breaker.open');
  if (open) add('order', 'recovery hold', holdPath, r.hold, open.ms, `the ${open.name} (${open.from})`);
  add(
    'order',
    'recovery hold',
    holdPath,
    r.hold,
    originLifeMs(e),
    'the longest origin (client.timeout × the tries, with the retry waits)',
  );
  add(
    'order',
    'recovery deadline (within × trigger window)',
    ['recovery', 'within'],
    r.within * triggerWindowMs(s.triggers),
    2 * GOODPUT_BUCKET_MS,
    'two goodput buckets (recovered and recovered-late are told apart on whole seconds)',
  );
  add(
    'order',
    'observation',
    ['schedule', 'observe'],
    s.observe,
    3 * TREND_TAIL_MARGIN * MIN_TREND_MS,
    `3 × ${TREND_TAIL_MARGIN} × the trend test’s shortest tail (it reads the last third)`,
  );

  const resp = meanResponseMs(plan);
  add('floor', 'recovery window', ['recovery', 'window'], r.window, GOODPUT_BUCKET_MS, 'one goodput bucket');
  if (resp !== null) {
    const relax = RELAXATION_RESPONSES * resp;
    const relaxWords = `${RELAXATION_RESPONSES} mean response times (S / (1 − ρ) = ${fmtMs(resp)} at the planned load)`;
    add('floor', 'recovery window', ['recovery', 'window'], r.window, relax, relaxWords);
    if (r.hold > 0) add('floor', 'recovery hold', holdPath, r.hold, relax, relaxWords);
  }
  // tolerance ≥ 3/√(G·W·f)  ⇔  W·f ≥ 9 / (G·tolerance²)
  const g = plannedGoodputPerS(plan);
  if (g > 0)
    add(
      'floor',
      'recovery window',
      ['recovery', 'tolerance'],
      r.window,
      r.tolerance > 0 ? (1000 * NOISE_SDS ** 2) / (g * r.tolerance ** 2) : Number.POSITIVE_INFINITY,
      `the one at which tolerance ${+(r.tolerance * 100).toFixed(3)}% is the noise floor ${NOISE_SDS}/√(goodput × window) at the planned ${+g.toFixed(3)}/s`,
      g,
    );
  return out;
}

/** The smallest scale every limit accepts, rounded up to 0.01; above 1 when even scale 1 is refused. */
export function smallestAcceptedScale(plan: RunPlan): number {
  const m = Math.max(0, ...scaleLimits(plan).map((l) => l.minScale));
  return Math.ceil(m * 100 - 1e-9) / 100;
}

/** The limits a scale breaks (empty when it is accepted). */
export function brokenScaleLimits(plan: RunPlan, scale = plan.scale): ScaleLimit[] {
  return scaleLimits(plan).filter((l) => l.declaredMs * scale < l.boundMs * (1 - 1e-9));
}

/** One broken limit in words, for a refusal. */
export function describeBrokenLimit(l: ScaleLimit, scale: number): string {
  const head = `${l.what} ${fmtMs(l.declaredMs)} × scale ${scale} = ${fmtMs(l.declaredMs * scale)}, under ${l.bound}: ${fmtMs(l.boundMs)}`;
  if (l.minScale > 1)
    return l.goodputPerS !== undefined
      ? `${head}; no scale accepts it: raise recovery.tolerance to ${noiseTolerance(l.goodputPerS, l.declaredMs * scale)} or lengthen recovery.window`
      : `${head}; no scale accepts it`;
  return `${head} (the smallest scale this limit accepts is ${Math.ceil(l.minScale * 100 - 1e-9) / 100})`;
}

/** The least tolerance the noise floor allows for a window at a goodput. */
function noiseTolerance(goodputPerS: number, windowMs: number): string {
  return `${Math.ceil((100 * NOISE_SDS) / Math.sqrt((goodputPerS * windowMs) / 1000))}%`;
}

function fmtMs(ms: number): string {
  return ms >= 1000 ? `${+(ms / 1000).toFixed(3)} s` : `${+ms.toFixed(1)} ms`;
}
