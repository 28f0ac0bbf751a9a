import type { z } from 'zod';
import type { ArrivalProcess } from '../../../bench/arrival/ArrivalProcess.js';
import type { RateSpec } from '../../../foundation/units.js';

/**
 * What one arrival kind is made of, in one file under arrivals/: how the experiment file
 * declares it (a field of `load:` with its schema), what it resolves to (its plan), how
 * the bench generates it (the factory of an ArrivalProcess), and how it is described. The
 * registry (arrivals/index.ts) collects the kinds; the load section, the plan, the dry
 * run, the run and the JSON Schema iterate it.
 */

/** The inter-arrival law the open loop is asked for (`load.arrival`). */
export type ArrivalLaw = 'poisson' | 'constant';

/** Every plan is tagged by the process that generates it. */
export interface ArrivalPlanBase {
  readonly kind: string;
}

/** What a declared shape resolves to, before the workload mix is attached. */
export interface PlannedArrival<P extends ArrivalPlanBase> {
  /** Open loop (the default), or closed loop, which exists for comparison only. */
  readonly model: 'open' | 'closed';
  readonly arrival: P;
  /** Expected origins per second over the run (open loop); null for a closed loop. */
  readonly meanPerS: number | null;
  /** Highest offered rate at any time (open loop), for sizing the client; null for a closed loop. */
  readonly peakPerS: number | null;
}

export interface ArrivalContext {
  /** The capacity `% capacity` rates are fractions of (nominal, or measured by calibrate). */
  readonly capacityPerS: number;
  readonly scale: number;
  readonly totalMs: number;
  /** The experiment file, for resolving a trace's relative path. */
  readonly sourceFile?: string | undefined;
}

/** A declared shape of the offered load: one field of `load:`, exactly one given. */
export interface ArrivalShape<Z extends z.ZodType, P extends ArrivalPlanBase> {
  /** The schema of the field (it is optional in the section: another shape may be given). */
  readonly schema: Z;
  /** Why `arrival: constant` is refused, for a shape that exists only as a Poisson process. */
  readonly poissonOnly?: string;
  /** What the load is, when a load spike cannot multiply it; undefined when it can. */
  readonly notSpikeable: (s: z.output<Z>) => string | undefined;
  /** The shape resolved to req/s and placed on the run's timeline (durations × `--scale`). */
  readonly plan: (s: z.output<Z>, law: ArrivalLaw, ctx: ArrivalContext) => PlannedArrival<P>;
  /** One line for reports and --dry-run; `r` writes a rate as declared. */
  readonly describe: (s: z.output<Z>, law: ArrivalLaw, r: (x: RateSpec) => string) => string;
  /** The field's value in a small valid experiment (YAML flow style), for the registry's round-trip test. */
  readonly example: string;
}

/** The run's view of a plan: its seed and length. */
export interface ArrivalRun {
  readonly seed: number;
  readonly totalMs: number;
}

/** A generated process: a plan kind, its factory and its expected arrivals. */
export interface ArrivalGenerator<P extends ArrivalPlanBase> {
  readonly kind: P['kind'];
  // Methods, not function-typed fields: the registry (index.ts) holds every kind's
  // generator as one of any plan, and hands each only plans of its own kind.
  /** The process generating the plan's arrivals; null when the load paces itself (closed loop). */
  build(p: P, run: ArrivalRun): ArrivalProcess | null;
  /**
   * Expected arrivals in a span (ms since run start), as the dry run plans them (a
   * stationary kind at its mean rate); null when they depend on the system.
   */
  expectedOrigins(p: P, span: Span): number | null;
  /**
   * Expected arrivals in a span following the kind's rate in time, which the analysis
   * compares with the achieved ones second by second; null when they depend on the system.
   */
  expectedArrivals(p: P, span: Span): number | null;
}

export interface Span {
  readonly startMs: number;
  readonly endMs: number;
}

/**
 * One arrival kind: a declared shape, a generator, or both (several shapes share the
 * rate-profile generator; a replay of timestamps has its own).
 */
export interface ArrivalKindDef {
  readonly shape?: { readonly example: string };
  readonly generator?: { readonly kind: string };
}

/** Types a shape from its schema, so its callbacks need no annotation. */
export function arrivalShape<Z extends z.ZodType, P extends ArrivalPlanBase>(
  s: ArrivalShape<Z, P>,
): ArrivalShape<Z, P> {
  return s;
}

/** Types a generator from its plan. */
export function arrivalGenerator<P extends ArrivalPlanBase>(g: ArrivalGenerator<P>): ArrivalGenerator<P> {
  return g;
}

/** A declared rate in req/s (`% capacity` against the capacity the run uses). */
export function resolveRate(r: RateSpec, capacityPerS: number): number {
  return 'perS' in r ? r.perS : r.capacityFraction * capacityPerS;
}
