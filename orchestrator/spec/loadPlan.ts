import { dirname, isAbsolute, resolve } from 'node:path';
import type { DurationDist } from '../../foundation/distributions.js';
import type { RateSegment } from '../../bench/arrival/profile.js';
import { RateProfile } from '../../bench/arrival/profile.js';
import type { RequestClass } from '../../bench/workload/mix.js';
import { DEFAULT_CLASS } from '../../bench/workload/mix.js';
import { toDurationDist } from '../../foundation/fields.js';
import type { LoadSpec } from './sections/load.js';
import { readTrace } from './trace.js';
import type { RateSpec } from '../../foundation/units.js';

/** The arrival process of a run, resolved to req/s and placed on the run's timeline. */
export type ArrivalPlan =
  | {
      readonly kind: 'profile';
      readonly law: 'poisson' | 'constant';
      readonly segments: readonly RateSegment[];
      readonly label: string;
    }
  | {
      readonly kind: 'waves';
      readonly meanPerS: number;
      readonly amplitudePerS: number;
      readonly periodMs: number;
    }
  | {
      readonly kind: 'onOff';
      readonly onMs: number;
      readonly offMs: number;
      readonly onPerS: number;
      readonly offPerS: number;
    }
  | { readonly kind: 'timestamps'; readonly timesMs: readonly number[] }
  | { readonly kind: 'closed'; readonly users: number; readonly think: DurationDist };

export interface LoadPlan {
  /** Open loop (the default), or closed loop, which exists for comparison only. */
  readonly model: 'open' | 'closed';
  readonly arrival: ArrivalPlan;
  /** Expected origins per second over the run (open loop); null for a closed loop. */
  readonly meanPerS: number | null;
  /** Highest offered rate at any time (open loop), for sizing the client; null for a closed loop. */
  readonly peakPerS: number | null;
  readonly mix: readonly RequestClass[];
}

export interface LoadContext {
  /** The capacity `% capacity` rates are fractions of (nominal, or measured by calibrate). */
  readonly capacityPerS: number;
  readonly scale: number;
  readonly totalMs: number;
  /** The experiment file, for resolving a trace's relative path. */
  readonly sourceFile?: string | undefined;
}

export function resolveRate(r: RateSpec, capacityPerS: number): number {
  return 'perS' in r ? r.perS : r.capacityFraction * capacityPerS;
}

/**
 * Resolves the load section. Phases are laid from the start of the run; if they end
 * before the run does, the last phase's final rate holds until the end; past the end
 * they are cut. `--scale` shrinks phase, wave and on/off durations like the schedule
 * (the rates stay as declared).
 */
export function planLoad(l: LoadSpec, ctx: LoadContext): LoadPlan {
  const rate = (r: RateSpec): number => resolveRate(r, ctx.capacityPerS);
  const f = ctx.scale;
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
  const profile = (segments: RateSegment[], label: string): LoadPlan => {
    const fitted = fitToRun(segments, ctx.totalMs);
    const p = new RateProfile(fitted);
    return {
      model: 'open',
      arrival: { kind: 'profile', law: l.arrival, segments: fitted, label },
      meanPerS: ctx.totalMs > 0 ? p.total / (ctx.totalMs / 1000) : 0,
      peakPerS: p.peakPerS,
      mix,
    };
  };
  if (l.rate)
    return profile(
      [{ durationMs: ctx.totalMs, fromPerS: rate(l.rate), toPerS: rate(l.rate) }],
      `a flat ${rate(l.rate)}/s`,
    );
  if (l.phases) {
    const segs = l.phases.map((p) =>
      'rate' in p
        ? { durationMs: p.duration * f, fromPerS: rate(p.rate), toPerS: rate(p.rate) }
        : { durationMs: p.duration * f, fromPerS: rate(p.from), toPerS: rate(p.to) },
    );
    return profile(segs, `${l.phases.length} phases`);
  }
  if (l.waves) {
    const meanPerS = rate(l.waves.mean);
    const amplitudePerS = rate(l.waves.amplitude);
    return {
      model: 'open',
      arrival: { kind: 'waves', meanPerS, amplitudePerS, periodMs: l.waves.period * f },
      meanPerS,
      peakPerS: meanPerS + amplitudePerS,
      mix,
    };
  }
  if (l.onOff) {
    const onPerS = rate(l.onOff.rateOn);
    const offPerS = l.onOff.rateOff ? rate(l.onOff.rateOff) : 0;
    const onMs = l.onOff.on * f;
    const offMs = l.onOff.off * f;
    return {
      model: 'open',
      arrival: { kind: 'onOff', onMs, offMs, onPerS, offPerS },
      meanPerS: (onMs * onPerS + offMs * offPerS) / (onMs + offMs),
      peakPerS: Math.max(onPerS, offPerS),
      mix,
    };
  }
  if (l.replay) {
    const file =
      isAbsolute(l.replay.file) || !ctx.sourceFile
        ? l.replay.file
        : resolve(dirname(ctx.sourceFile), l.replay.file);
    const values = readTrace(file, l.replay.format);
    if (l.replay.format === 'rates')
      return profile(
        values.map((r) => ({ durationMs: 1000 * f, fromPerS: r, toPerS: r })),
        `a trace of ${values.length} s`,
      );
    const timesMs = values.filter((t) => t < ctx.totalMs).sort((a, b) => a - b);
    let peak = 0;
    for (let i = 0, j = 0; i < timesMs.length; i++) {
      while (timesMs[j]! < timesMs[i]! - 1000) j++;
      peak = Math.max(peak, i - j + 1);
    }
    return {
      model: 'open',
      arrival: { kind: 'timestamps', timesMs },
      meanPerS: timesMs.length / (ctx.totalMs / 1000),
      peakPerS: peak,
      mix,
    };
  }
  const c = l.closedLoop!;
  return {
    model: 'closed',
    arrival: { kind: 'closed', users: c.users, think: toDurationDist(c.think) },
    meanPerS: null,
    peakPerS: null,
    mix,
  };
}

/** Cuts segments at the run's end, or holds the last rate until it. */
function fitToRun(segments: readonly RateSegment[], totalMs: number): RateSegment[] {
  const out: RateSegment[] = [];
  let t = 0;
  for (const s of segments) {
    if (t >= totalMs) break;
    if (t + s.durationMs <= totalMs) out.push(s);
    else {
      const d = totalMs - t;
      out.push({
        durationMs: d,
        fromPerS: s.fromPerS,
        toPerS: s.fromPerS + (s.toPerS - s.fromPerS) * (d / s.durationMs),
      });
    }
    t += s.durationMs;
  }
  const last = out[out.length - 1];
  if (t < totalMs && last) out.push({ durationMs: totalMs - t, fromPerS: last.toPerS, toPerS: last.toPerS });
  return out;
}

/** One line saying what load the experiment declares, for reports and --dry-run. */
export function describeLoad(l: LoadSpec): string {
  const r = (x: RateSpec): string =>
    'perS' in x ? `${+x.perS.toFixed(3)}/s` : `${+(x.capacityFraction * 100).toFixed(3)}% of capacity`;
  const mix = l.mix
    ? `; mix ${l.mix.map((c) => `${c.name} ${+(c.share * 100).toFixed(2)}%`).join(', ')}`
    : '';
  if (l.rate) return `open loop, ${l.arrival} arrivals at ${r(l.rate)}${mix}`;
  if (l.phases)
    return `open loop, ${l.arrival} arrivals over ${l.phases.length} phases (${l.phases.map((p) => ('rate' in p ? r(p.rate) : `${r(p.from)}→${r(p.to)}`)).join(', ')})${mix}`;
  if (l.waves) return `open loop, Poisson waves around ${r(l.waves.mean)} ± ${r(l.waves.amplitude)}${mix}`;
  if (l.onOff)
    return `open loop, on/off bursts of ${r(l.onOff.rateOn)} (${l.onOff.rateOff ? r(l.onOff.rateOff) : '0/s'} between)${mix}`;
  if (l.replay) return `open loop, replay of ${l.replay.file} (${l.replay.format})${mix}`;
  return `CLOSED loop (for comparison only): ${l.closedLoop!.users} virtual users${mix}`;
}
