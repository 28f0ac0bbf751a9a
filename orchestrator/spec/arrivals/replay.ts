import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { replayArrivals } from '../../../bench/arrival/replay.js';
import { readTrace } from '../trace.js';
import { arrivalGenerator, arrivalShape, type PlannedArrival, type Span } from './kind.js';
import { profilePlan, type ProfilePlan } from './profile.js';

/** Recorded arrival times, replayed as they are. */
export interface TimestampsPlan {
  readonly kind: 'timestamps';
  readonly timesMs: readonly number[];
}

const countIn = (timesMs: readonly number[], span: Span): number =>
  timesMs.filter((t) => t >= span.startMs && t < span.endMs).length;

/**
 * `replay:` a trace: per-second rates (CSV column `rate`), replayed as a rate profile, or
 * arrival timestamps (`t_ms` or `t_s`), replayed as they are; path relative to the
 * experiment file.
 */
export const replay = {
  shape: arrivalShape({
    schema: z.strictObject({ file: z.string().min(1), format: z.enum(['rates', 'timestamps']) }),
    notSpikeable: (r) => (r.format === 'rates' ? undefined : 'a replay of timestamps'),
    plan(r, law, ctx): PlannedArrival<ProfilePlan | TimestampsPlan> {
      const file = isAbsolute(r.file) || !ctx.sourceFile ? r.file : resolve(dirname(ctx.sourceFile), r.file);
      const values = readTrace(file, r.format);
      if (r.format === 'rates')
        return profilePlan(
          values.map((v) => ({ durationMs: 1000 * ctx.scale, fromPerS: v, toPerS: v })),
          `a trace of ${values.length} s`,
          law,
          ctx.totalMs,
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
      };
    },
    describe: (r) => `open loop, replay of ${r.file} (${r.format})`,
    example: '{ file: trace.csv, format: rates }',
  }),
  generator: arrivalGenerator({
    kind: 'timestamps',
    build: (a: TimestampsPlan, run) => replayArrivals(a.timesMs, run.totalMs),
    expectedOrigins: (a: TimestampsPlan, span) => countIn(a.timesMs, span),
    expectedArrivals: (a: TimestampsPlan, span) => countIn(a.timesMs, span),
  }),
};
