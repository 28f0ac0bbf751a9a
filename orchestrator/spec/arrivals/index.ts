import type { z } from 'zod';
import type { ArrivalProcess } from '../../../bench/arrival/ArrivalProcess.js';
import { closedLoop } from './closedLoop.js';
import type { ArrivalGenerator, ArrivalKindDef, ArrivalRun, ArrivalShape, Span } from './kind.js';
import { onOff } from './onOff.js';
import { phases } from './phases.js';
import { profile } from './profile.js';
import { rate } from './rate.js';
import { replay } from './replay.js';
import { waves } from './waves.js';

/**
 * The arrival kinds, one file each. A new kind is its file and one line here; the order
 * is the order of the shapes' fields in `load:` (and in the JSON Schema).
 */
export const ARRIVAL_KINDS = {
  profile,
  rate,
  phases,
  waves,
  onOff,
  replay,
  closedLoop,
} satisfies Record<string, ArrivalKindDef>;

type Kinds = typeof ARRIVAL_KINDS;
type ShapeOf<D> = D extends { shape: ArrivalShape<infer Z, infer P> } ? ArrivalShape<Z, P> : never;
type GeneratorOf<D> = D extends { generator?: ArrivalGenerator<infer P> } ? P : never;

/** The kinds declared as a field of `load:` (the alternative shapes of the offered load). */
export type ShapeName = { [K in keyof Kinds]: ShapeOf<Kinds[K]> extends never ? never : K }[keyof Kinds];
export type ShapeSchemas = { [K in ShapeName]: ShapeOf<Kinds[K]>['schema'] };

/** What any shape resolves to: the plan of one of the generators. */
export type ArrivalPlan = { [K in keyof Kinds]: GeneratorOf<Kinds[K]> }[keyof Kinds];

type Planned = { [K in ShapeName]: ReturnType<ShapeOf<Kinds[K]>['plan']>['arrival'] }[ShapeName];
/**
 * Every plan a shape produces has a generator: a shape whose plan no kind generates is a
 * compile error here.
 */
const everyPlanGenerated: [Exclude<Planned['kind'], ArrivalPlan['kind']>] extends [never] ? true : never =
  true;
void everyPlanGenerated;

export const SHAPE_NAMES = (Object.keys(ARRIVAL_KINDS) as (keyof Kinds)[]).filter(
  (k): k is ShapeName => 'shape' in ARRIVAL_KINDS[k],
);

/** A shape's definition, typed loosely for iteration (the value was validated by its own schema). */
export function shapeOf(name: ShapeName): ArrivalShape<z.ZodType, ArrivalPlan> {
  return (ARRIVAL_KINDS[name] as { shape: unknown }).shape as ArrivalShape<z.ZodType, ArrivalPlan>;
}

/** Each shape's field of `load:`, optional (another shape may be given), in registry order. */
export function shapeFields(): { [K in ShapeName]: z.ZodOptional<ShapeSchemas[K]> } {
  return Object.fromEntries(SHAPE_NAMES.map((k) => [k, shapeOf(k).schema.optional()])) as {
    [K in ShapeName]: z.ZodOptional<ShapeSchemas[K]>;
  };
}

const GENERATORS = new Map<string, ArrivalGenerator<ArrivalPlan>>(
  Object.values(ARRIVAL_KINDS).flatMap((d) => ('generator' in d ? [[d.generator.kind, d.generator]] : [])),
);

/** The generator of a plan (every plan kind has one: checked above). */
export function generatorOf(a: ArrivalPlan): ArrivalGenerator<ArrivalPlan> {
  return GENERATORS.get(a.kind)!;
}

/** Expected arrivals of a plan in a span, as the dry run plans them (exact for profiles and traces); null for a closed loop. */
export function expectedOrigins(a: ArrivalPlan, span: Span): number | null {
  return generatorOf(a).expectedOrigins(a, span);
}

/** Expected arrivals of a plan in a span following its rate in time (the analysis's); null for a closed loop. */
export function expectedArrivalsIn(a: ArrivalPlan, span: Span): number | null {
  return generatorOf(a).expectedArrivals(a, span);
}

/** The open-loop arrival process of a plan (a closed loop has none: its users pace themselves). */
export function arrivalProcess(a: ArrivalPlan, run: ArrivalRun): ArrivalProcess {
  const process = generatorOf(a).build(a, run);
  // Only a load that paces itself has no generated schedule.
  if (!process) throw new Error('a closed loop has no arrival process');
  return process;
}
