import { z } from 'zod';
import { duration, fraction, positiveDuration } from '../../foundation/fields.js';
import type { Target } from '../lab/target.js';
import type { LabSection } from '../spec/sections/lab.js';
import type { LoadSpec } from '../spec/sections/load.js';
import type { Trigger } from './Trigger.js';

/**
 * What a trigger kind is, in one module: its schema fragment (the entry of `schedule.trigger`),
 * its checks against the lab the experiment declares, its words for the docs, the dry run
 * and the report, and its factory (apply and undo through the Lab interface; the run journals
 * every trigger's undo the same way, run/triggers.ts). A kind is registered with one line in
 * registry.ts (or, in a test, with registerTrigger); the spec's trigger union, the JSON
 * Schema, the docs' trigger table and the runtimes' capability checks are derived from there.
 */

/**
 * The class of thing a trigger acts on, which a runtime declares it can act on
 * (RuntimePlugin.capabilities): a component's process (or container, or simulated server),
 * a dependency link (through the fault proxy), the offered load, the cache's content, the
 * LLM provider's run-time switch, or the machine the orchestrator runs on (a file, a command);
 * `capacity` is the built-in api's run-time switch (its work time and its pool's size); `cpu`
 * a real CPU quota on a component; `interface` a container's network interface (tc netem,
 * set from this host: the Docker runtime).
 */
export const TARGET_CLASSES = [
  'process',
  'capacity',
  'cpu',
  'link',
  'load',
  'cache',
  'provider',
  'host',
  'interface',
] as const;
export type TargetClass = (typeof TARGET_CLASSES)[number];

/** The trigger's entry as the schema outputs it: every kind has `kind` and `duration`. */
export interface TriggerFields {
  readonly kind: string;
  readonly duration: number;
  readonly at?: number | undefined;
}

/** What a kind's checks see of the experiment (the sections below the schedule). */
export interface TriggerContext {
  readonly lab: LabSection;
  readonly load: LoadSpec;
}

/** A problem with one trigger: the field of the trigger's entry, and why. */
export interface TriggerIssue {
  readonly field: string;
  readonly message: string;
}

export interface TriggerKindDef<K extends string = string, S extends z.ZodType = z.ZodType> {
  readonly kind: K;
  /** The entry's schema: a strict object with `kind: z.literal(K)` and `...timing`. */
  readonly schema: S;
  /** One sentence for the docs' trigger table and `metabench help`. */
  readonly summary: string;
  /** What it acts on (the runtimes' capabilities are by class). */
  readonly acts: TargetClass;
  /** What it acts on, for events and reports: a component (`api[1]`), `link:<name>`, or `load`. */
  target(t: z.output<S>): string;
  /** The field an error about its target points at (default: `target`, or `link` for a link). */
  readonly targetField?: string;
  /** Checks against the lab and load the experiment declares, beyond its schema. */
  validate?(t: z.output<S>, ctx: TriggerContext): TriggerIssue[];
  /** The trigger in words, with its (scaled) duration already written: "pause api for 5 s". */
  describe(t: z.output<S>, duration: string): string;
  /** An instant fault (a flush): its duration only sets the recovery deadline, so no scale limit applies. */
  readonly instant?: boolean;
  /**
   * The field that sets how large the fault is (slowdown's `factor`, workers' `to`), which
   * `metabench model --magnitudes` varies; absent for a kind that has none (pause, kill).
   */
  readonly magnitude?: string;
  /** The trigger of an entry; `name` is unique in the run (a toxic's name on its link). */
  create(t: z.output<S>, name: string): Trigger;
}

/** A kind definition with its types checked against its own schema. */
export function defineTrigger<K extends string, S extends z.ZodType<TriggerFields & { kind: K }>>(
  def: TriggerKindDef<K, S>,
): TriggerKindDef<K, S> {
  return def;
}

/** Every kind's timing fields. */
export const timing = {
  /** How long the fault lasts (an instant one: the span the recovery deadline multiplies). */
  duration: positiveDuration(),
  /** Start, as an offset from the end of the baseline; default: when the previous trigger ends. */
  at: duration().optional(),
};

/**
 * A component, or one api replica `api[i]` (0-based); `api` is every replica. What it may
 * name is the experiment's: the built-in lab's components (parseTarget says why another is
 * refused, and replica i is checked against lab.api.replicas), or the components your own
 * system declares (system.processes); spec/schema.ts checks it against the one declared.
 */
export const target = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]*(\[(0|[1-9][0-9]*)\])?$/,
    'a component: api, redis, postgres or llm (or api[i], one api replica) in the lab; a name from system.processes in your own system',
  )
  .transform((s): Target => s as Target);

/**
 * The built-in lab's links (each through the fault proxy): the api's dependency links, named
 * after the dependency, and `api`, the clients' link to the api (lab/apiLink.ts; `api[i]`
 * names the link to one replica).
 */
export const LINKS = ['api', 'redis', 'postgres', 'llm'] as const;

/**
 * A link: one of LINKS in the built-in lab (or api[i], the clients' link to one api replica),
 * or a link your own system declares (system.links); spec/schema.ts checks it against the
 * one declared.
 */
export const link = z
  .string()
  .regex(
    /^[a-z][a-z0-9_-]*(\[(0|[1-9][0-9]*)\])?$/,
    'a link: api (or api[i], one replica), redis, postgres or llm in the lab; a name from system.links in your own system',
  );

/** What a toxic on a link shares: the link, the direction, and the share of connections hit. */
export const onLink = {
  link,
  /** downstream: the replies (the default); upstream: the requests (the api's to a dependency, the clients' on link api) */
  stream: z.enum(['downstream', 'upstream']).default('downstream'),
  /** Share of the link's connections affected (default 100%). */
  toxicity: fraction.default(1),
};
