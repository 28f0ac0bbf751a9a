/**
 * A piecewise-linear offered-rate profile λ(t): a sequence of segments, each with a
 * duration and a rate that is constant or ramps linearly between two values. Phases
 * (ramp / sustain / burst / recover), step tests and per-second trace rates are all
 * profiles. Its integral Λ(t) (expected arrivals by t) has a closed-form inverse on
 * every segment, so arrivals are placed exactly rather than by thinning.
 */
export interface RateSegment {
  readonly durationMs: number;
  /** Rate at the segment's start and end, req/s (equal for a constant segment). */
  readonly fromPerS: number;
  readonly toPerS: number;
}

interface Placed extends RateSegment {
  readonly startMs: number;
  /** Λ at the segment's start (expected arrivals before it). */
  readonly before: number;
  /** Expected arrivals inside the segment. */
  readonly count: number;
}

export class RateProfile {
  private readonly segs: Placed[] = [];
  readonly endMs: number;
  /** Λ(end): the expected number of arrivals over the whole profile. */
  readonly total: number;

  constructor(
    segments: readonly RateSegment[],
    readonly startMs = 0,
  ) {
    let t = startMs;
    let before = 0;
    for (const s of segments) {
      if (!(s.durationMs > 0)) continue;
      if (s.fromPerS < 0 || s.toPerS < 0) throw new RangeError('rates must be >= 0');
      const count = ((s.fromPerS + s.toPerS) / 2) * (s.durationMs / 1000);
      this.segs.push({ ...s, startMs: t, before, count });
      t += s.durationMs;
      before += count;
    }
    this.endMs = t;
    this.total = before;
  }

  /** λ(t) in req/s; 0 outside the profile. */
  rate(tMs: number): number {
    const s = this.segmentAt(tMs);
    if (!s) return 0;
    return s.fromPerS + (s.toPerS - s.fromPerS) * ((tMs - s.startMs) / s.durationMs);
  }

  /** Λ(t): expected arrivals in [start, t). */
  cumulative(tMs: number): number {
    if (tMs <= this.startMs) return 0;
    if (tMs >= this.endMs) return this.total;
    const s = this.segmentAt(tMs)!;
    const x = (tMs - s.startMs) / 1000;
    const slope = (s.toPerS - s.fromPerS) / (s.durationMs / 1000);
    return s.before + s.fromPerS * x + (slope * x * x) / 2;
  }

  /** Λ⁻¹(n): the time by which n arrivals are expected; undefined past the end. */
  inverse(n: number): number | undefined {
    if (n < 0 || n >= this.total) return undefined;
    // Segments are few: a linear scan from a cursor is cheaper than a search.
    let i = this.cursor;
    if ((this.segs[i]?.before ?? Infinity) > n) i = 0;
    while (i < this.segs.length - 1 && this.segs[i + 1]!.before <= n) i++;
    this.cursor = i;
    const s = this.segs[i]!;
    const m = n - s.before;
    const a = s.fromPerS;
    const slope = (s.toPerS - s.fromPerS) / (s.durationMs / 1000);
    let x: number;
    if (m <= 0) x = 0;
    else if (Math.abs(slope) < 1e-12) x = m / a;
    else {
      // Solve a·x + slope·x²/2 = m for the root in [0, duration].
      const disc = Math.max(0, a * a + 2 * slope * m);
      x = (2 * m) / (a + Math.sqrt(disc));
    }
    return s.startMs + Math.min(x * 1000, s.durationMs);
  }
  private cursor = 0;

  /** The same profile with the rate multiplied by `k` over [startMs, endMs) (a load spike). */
  scaled(spanStartMs: number, spanEndMs: number, k: number): RateProfile {
    const cuts = new Set<number>([spanStartMs, spanEndMs]);
    const out: RateSegment[] = [];
    for (const s of this.segs) {
      const bounds = [
        s.startMs,
        ...[...cuts].filter((c) => c > s.startMs && c < s.startMs + s.durationMs).sort((x, y) => x - y),
        s.startMs + s.durationMs,
      ];
      for (let j = 0; j < bounds.length - 1; j++) {
        const a = bounds[j]!;
        const b = bounds[j + 1]!;
        const f = a >= spanStartMs && b <= spanEndMs ? k : 1;
        out.push({ durationMs: b - a, fromPerS: this.rate(a) * f, toPerS: this.rateAtEnd(s, b) * f });
      }
    }
    return new RateProfile(out, this.startMs);
  }

  get segments(): readonly RateSegment[] {
    return this.segs.map(({ durationMs, fromPerS, toPerS }) => ({ durationMs, fromPerS, toPerS }));
  }

  get peakPerS(): number {
    return this.segs.reduce((m, s) => Math.max(m, s.fromPerS, s.toPerS), 0);
  }

  private rateAtEnd(s: Placed, tMs: number): number {
    return s.fromPerS + (s.toPerS - s.fromPerS) * ((tMs - s.startMs) / s.durationMs);
  }

  private segmentAt(tMs: number): Placed | undefined {
    if (tMs < this.startMs || tMs >= this.endMs) return undefined;
    for (const s of this.segs) if (tMs < s.startMs + s.durationMs) return s;
    return undefined;
  }
}
