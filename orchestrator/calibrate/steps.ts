import { FAILURE_KINDS, type FailureKind } from '../../bench/outcome.js';
import type { Recorded } from '../../bench/record/Recorder.js';
import type { LatencySummary } from '../../bench/record/histogram.js';
import type { ClientSpec } from '../spec/sections/client.js';
import type { Experiment } from '../spec/schema.js';
import type { StepFigures } from './saturation.js';
import { round } from '../../foundation/round.js';

/**
 * The step test's plan and per-step measurement (the runner is runCalibration.ts).
 *
 * The default ladder, as fractions of the lab's nominal capacity: coarse far below it,
 * 10% apart around it, and two steps well above, so both the knee and the shape after
 * it (what 150% of saturation leaves of goodput) are seen.
 */
export const DEFAULT_LADDER = [0.2, 0.4, 0.6, 0.8, 0.9, 1.0, 1.1, 1.2, 1.5, 2.0] as const;

/** Defaults before `--scale`: each step lasts 20 s, of which the first 5 s settle and are not measured. */
export const DEFAULT_STEP_MS = 20_000;
export const DEFAULT_SETTLE_MS = 5_000;
/** Bisections between the saturation step and the step above it. */
export const DEFAULT_REFINE = 2;
/** The goodput-at-overload probe: this multiple of the saturation point. */
export const OVERLOAD_FACTOR = 1.5;

/**
 * The client the step test uses: the experiment's per-attempt timeout and deadline
 * (so goodput means what it means in the experiment: successes within the deadline),
 * its connection cap and deadline propagation, and nothing that changes the offered
 * load or refuses it client-side: no retries, no hedging, no retry budget, breaker,
 * throttling or abandonment, one client instance. The step test measures the system
 * against the load offered to it; the client policies are what experiments vary
 * around that capacity. Server-side mitigations stay: they are part of the lab.
 */
export function stepClient(c: ClientSpec): ClientSpec {
  return {
    timeout: c.timeout,
    ...(c.deadline !== undefined ? { deadline: c.deadline } : {}),
    retry: { policy: 'none', maxAttempts: 1 },
    propagateDeadline: c.propagateDeadline,
    instances: 1,
    ...(c.connections !== undefined ? { connections: c.connections } : {}),
  };
}

/** The experiment as the step test runs it: its lab and workload, the step client, a flat rate (for sizing the client). */
export function stepExperiment(e: Experiment, peakPerS: number): Experiment {
  const { productionPeak: _peak, ...load } = e.load;
  return {
    ...e,
    client: stepClient(e.client),
    load: {
      arrival: load.arrival,
      rate: { perS: peakPerS },
      ...(load.mix ? { mix: load.mix } : {}),
    },
    hypothesis: {},
    repeat: 1,
  };
}

/** Whole seconds (a step is measured on whole one-second buckets), at least `min`. */
export function wholeSeconds(ms: number, min: number): number {
  return Math.max(min, Math.round(ms / 1000)) * 1000;
}

export type StepKind = 'ladder' | 'refine' | 'overload';

/** One step as it ran (ms on the run's clock, whole seconds). */
export interface StepRun {
  /** 1-based, in the order the steps ran. */
  readonly index: number;
  readonly kind: StepKind;
  readonly ratePerS: number;
  readonly startMs: number;
  readonly endMs: number;
  /** The measurement window is [measureFromMs, endMs): the settling time before it is not measured. */
  readonly measureFromMs: number;
  /** Requests still queued or running at the api when the step started (the drain gave up); 0 normally. */
  readonly backlogAtStart: number;
}

/** What a step measured over its measurement window. */
export interface StepDetail extends StepFigures {
  readonly index: number;
  readonly kind: StepKind;
  readonly startS: number;
  readonly endS: number;
  readonly measureFromS: number;
  readonly seconds: number;
  /** Origins intended in the window. */
  readonly offered: number;
  /** goodput / offered in the window. */
  readonly goodputRatio: number | null;
  readonly latencyMs: LatencySummary;
  /** Failed origins completing in the window, by kind (only kinds that occurred). */
  readonly failures: Partial<Record<FailureKind, number>>;
  /** First attempts sent more than 1 ms late, intended in the window. */
  readonly lateSends: number;
  readonly backlogAtStart: number;
  /** Per request class (with a mix). */
  readonly classes?: Record<
    string,
    {
      readonly offeredPerS: number | null;
      readonly goodputPerS: number | null;
      readonly latencyMs: LatencySummary;
    }
  >;
}

type View = Pick<Recorded, 'bucketMs' | 'series' | 'successes' | 'classes' | 'classIndex'>;

/** A step's figures from the Recorder's series and success log (the window is whole buckets). */
export function measureStep(v: View, step: StepRun): StepDetail {
  const b = v.bucketMs;
  const from = Math.round(step.measureFromMs / b);
  const to = Math.round(step.endMs / b);
  const seconds = ((to - from) * b) / 1000;
  const sum = (arr: readonly number[] | undefined): number => {
    let x = 0;
    for (let i = from; i < to; i++) x += arr?.[i] ?? 0;
    return x;
  };
  const perS = (n: number): number | null => (seconds > 0 ? round(n / seconds, 3) : null);
  const s = v.series;
  const offered = sum(s.offered);
  const goodput = sum(s.goodput);
  const failures: Partial<Record<FailureKind, number>> = {};
  for (const k of FAILURE_KINDS) {
    const n = sum(s.failures[k]);
    if (n > 0) failures[k] = n;
  }
  const latency = v.successes?.latency(from * b, to * b) ?? empty();
  const classes = v.classes
    ? Object.fromEntries(
        Object.entries(v.classes).map(([name, c]) => [
          name,
          {
            offeredPerS: perS(sum(c.offered)),
            goodputPerS: perS(sum(c.goodput)),
            latencyMs: v.successes?.latency(from * b, to * b, v.classIndex?.[name]) ?? empty(),
          },
        ]),
      )
    : undefined;
  return {
    index: step.index,
    kind: step.kind,
    ratePerS: round(step.ratePerS, 3),
    startS: step.startMs / 1000,
    endS: step.endMs / 1000,
    measureFromS: step.measureFromMs / 1000,
    seconds,
    offered,
    offeredPerS: perS(offered),
    goodputPerS: perS(goodput),
    goodputRatio: offered > 0 ? round(goodput / offered, 3) : null,
    latencyMs: latency,
    failures,
    lateSends: sum(s.lateSends),
    backlogAtStart: step.backlogAtStart,
    ...(classes ? { classes } : {}),
  };
}

function empty(): LatencySummary {
  return { samples: 0, mean: null, p50: null, p90: null, p99: null, p999: null, max: null };
}
