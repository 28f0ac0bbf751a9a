import { z } from 'zod';
import type { TriggerFields, TriggerKindDef } from './kind.js';
import { bandwidth } from './kinds/bandwidth.js';
import { command } from './kinds/command.js';
import { cpuLimit } from './kinds/cpuLimit.js';
import { flushCache } from './kinds/flushCache.js';
import { kill } from './kinds/kill.js';
import { latency } from './kinds/latency.js';
import { loadSpike } from './kinds/loadSpike.js';
import { loss } from './kinds/loss.js';
import { netem } from './kinds/netem.js';
import { partition } from './kinds/partition.js';
import { pause } from './kinds/pause.js';
import { providerOutage } from './kinds/providerOutage.js';
import { resetPeer } from './kinds/resetPeer.js';
import { slowClose } from './kinds/slowClose.js';
import { slowdown } from './kinds/slowdown.js';
import { stop } from './kinds/stop.js';
import { timeout } from './kinds/timeout.js';
import { workers } from './kinds/workers.js';
import type { Trigger } from './Trigger.js';

/**
 * The trigger kinds, one module each (kind.ts says what a module holds). A new kind is its
 * file and one line here; the order is the order of the JSON Schema's alternatives and of
 * the docs' trigger table.
 */
export const BUILTIN_TRIGGERS = [
  pause,
  kill,
  stop,
  slowdown,
  workers,
  cpuLimit,
  latency,
  timeout,
  partition,
  bandwidth,
  resetPeer,
  slowClose,
  loss,
  netem,
  loadSpike,
  flushCache,
  providerOutage,
  command,
] as const;

type Builtin = (typeof BUILTIN_TRIGGERS)[number];
/** An entry of `schedule.trigger(s)` as validated (its kind's schema output). */
export type TriggerInput = z.output<Builtin['schema']>;
export type TriggerKindName = Builtin['kind'];
export const TRIGGER_KINDS = BUILTIN_TRIGGERS.map((d) => d.kind) as readonly TriggerKindName[];

/** Every registered kind, built in first, then those registered (by tests) in order. */
const kinds = new Map<string, TriggerKindDef>(BUILTIN_TRIGGERS.map((d) => [d.kind, d as TriggerKindDef]));
let unionBuilt = false;

/**
 * Adds a trigger kind to the registry, as a line of BUILTIN_TRIGGERS would. For kinds that
 * ship with metabench that line is the way; this is for a kind defined outside it (a test's
 * fixture). The schema's union is built once, when the first experiment is parsed, so a kind
 * is registered before that (at the top of a test file); later is an error, not a silent miss.
 */
export function registerTrigger(def: TriggerKindDef<string, z.ZodType<TriggerFields>>): void {
  if (kinds.has(def.kind)) throw new Error(`trigger kind "${def.kind}" is already registered`);
  if (unionBuilt)
    throw new Error(
      `trigger kind "${def.kind}" registered after the experiment schema was built: register it before parsing any experiment`,
    );
  kinds.set(def.kind, def as TriggerKindDef);
}

/** Every registered kind's definition, in registry order. */
export function triggerKinds(): readonly TriggerKindDef[] {
  return [...kinds.values()];
}

/** The definition of a registered kind (every parsed entry has one). */
export function triggerKind(kind: string): TriggerKindDef {
  const d = kinds.get(kind);
  if (!d) throw new Error(`trigger kind "${kind}" is not registered (orchestrator/trigger/registry.ts)`);
  return d;
}

/** The built-in kinds' union: its type is what the rest of the code reads. */
const builtinUnion = z.discriminatedUnion(
  'kind',
  BUILTIN_TRIGGERS.map((d) => d.schema) as unknown as [Builtin['schema'], ...Builtin['schema'][]],
);

/**
 * One entry of `schedule.trigger(s)`: the union of every registered kind's schema, built when
 * first used (so a kind registered by a test before any parse is in it). Typed as the built-in
 * union: a test's kind reaches the run through its definition, never through a type switch.
 */
export const triggerSchema = z.lazy(() => {
  unionBuilt = true;
  if (kinds.size === BUILTIN_TRIGGERS.length) return builtinUnion;
  const schemas = triggerKinds().map((d) => d.schema);
  return z.discriminatedUnion(
    'kind',
    schemas as unknown as [Builtin['schema']],
  ) as unknown as typeof builtinUnion;
});

/** What a trigger acts on, for events and reports: a component, a link, or the load. */
export function triggerTarget(t: TriggerFields): string {
  return (triggerKind(t.kind).target as (t: TriggerFields) => string)(t);
}

/** One trigger in words, its duration scaled: "latency 200 ms ± 50 ms on link postgres for 4 s". */
export function describeTrigger(t: TriggerFields, scale = 1): string {
  const d = `${+((t.duration * scale) / 1000).toFixed(3)} s`;
  return (triggerKind(t.kind).describe as (t: TriggerFields, d: string) => string)(t, d);
}

/** The trigger of an entry; `index` is its place in the schedule (0-based). */
export function createTrigger(spec: TriggerFields, index = 0): Trigger {
  const make = triggerKind(spec.kind).create as (t: TriggerFields, name: string) => Trigger;
  // The name makes a toxic's name unique in the run (Toxiproxy names toxics per link).
  return make(spec, `metabench_${index}_${spec.kind}`);
}
