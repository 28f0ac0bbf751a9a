import type { RateSegment } from '../../../bench/arrival/profile.js';
import { RateProfile } from '../../../bench/arrival/profile.js';
import { profiledArrivals } from '../../../bench/arrival/profiled.js';
import { seededRng } from '../../../foundation/rng.js';
import { arrivalGenerator, type ArrivalLaw, type PlannedArrival } from './kind.js';

/**
 * A piecewise-linear rate profile (bench/arrival/profile.ts), generated exactly: the
 * plan that flat rates, phases and per-second traces resolve to, and the only one a
 * load spike can multiply.
 */
export interface ProfilePlan {
  readonly kind: 'profile';
  readonly law: ArrivalLaw;
  readonly segments: readonly RateSegment[];
  readonly label: string;
}

export const profile = {
  generator: arrivalGenerator({
    kind: 'profile',
    build: (a: ProfilePlan, run) =>
      profiledArrivals(new RateProfile(a.segments), a.law, seededRng(run.seed, 'arrivals'), a.label),
    expectedOrigins(a: ProfilePlan, span) {
      let t = 0;
      let n = 0;
      for (const s of a.segments) {
        const lo = Math.max(t, span.startMs);
        const hi = Math.min(t + s.durationMs, span.endMs);
        if (hi > lo) {
          const at = (ms: number): number => s.fromPerS + ((s.toPerS - s.fromPerS) * (ms - t)) / s.durationMs;
          n += ((at(lo) + at(hi)) / 2) * ((hi - lo) / 1000);
        }
        t += s.durationMs;
      }
      return n;
    },
    expectedArrivals(a: ProfilePlan, span) {
      const prof = new RateProfile(a.segments);
      return prof.cumulative(span.endMs) - prof.cumulative(span.startMs);
    },
  }),
};

/**
 * The plan of a profile-shaped load. Segments are laid from the start of the run; if they
 * end before the run does, the last one's final rate holds until the end; past the end
 * they are cut.
 */
export function profilePlan(
  segments: readonly RateSegment[],
  label: string,
  law: ArrivalLaw,
  totalMs: number,
): PlannedArrival<ProfilePlan> {
  const fitted = fitToRun(segments, totalMs);
  const p = new RateProfile(fitted);
  return {
    model: 'open',
    arrival: { kind: 'profile', law, segments: fitted, label },
    meanPerS: totalMs > 0 ? p.total / (totalMs / 1000) : 0,
    peakPerS: p.peakPerS,
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
