import type { NewController } from '../../bench/abort.js';
import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import type { Transport } from '../../bench/transport/Transport.js';
import type { Clock } from '../../foundation/clock.js';
import type { ServerSeries } from '../scrape/scraper.js';
import type { RunPlan } from '../spec/plan.js';
import type { Experiment } from '../spec/schema.js';
import type { ComposeOptions } from './dockerData.js';
import type { Lab, UndoRecipe } from './Lab.js';
import { RUNTIMES, type Runtime } from './runtimes.js';
import { SpecError } from '../../foundation/errors.js';
import { TARGET_CLASSES, type TargetClass } from '../trigger/kind.js';
import { triggerKind } from '../trigger/registry.js';
import { parseApiLink } from './apiLink.js';

/**
 * The one interface a runtime implements (DESIGN.md §5): local, docker and sim each export a
 * RuntimePlugin, and the composition root (orchestrator/cli/runtimes.ts) registers them. The
 * orchestrator's run code reaches a runtime only through runtimePlugin(name), so it imports no
 * runtime, and no runtime imports the run code.
 */

/** The service's per-bucket series: scraped from /metrics in the lab, read off its counters in the simulation. */
export interface ServerSource {
  start(): void;
  stop(): Promise<ServerSeries>;
  /** Samples taken; the series is used only when there were at least two. */
  readonly scrapes: number;
}

/**
 * What differs between running an experiment on the lab and simulating it; the run
 * code does the rest the same way for both (run/runBody.ts: recorder, client policies,
 * driver, status line, teardown; run/runOnce.ts: triggers and the results files).
 */
export interface RunRuntime {
  readonly lab: Lab;
  /** The run's clock, created once the lab is up (its origin is the run's start). */
  clock(): Clock;
  transport(clock: Clock): Transport;
  serverSource(clock: Clock): ServerSource;
  /** Per-process CPU and memory, where there are processes. */
  procSampler(
    clock: Clock,
  ): { start(): void; stop(): Promise<Record<string, (number | null)[]>> } | undefined;
  /** Waits for `p`: in real time just that; in the simulation, by running its clock until `p` settles. */
  settle<T>(p: Promise<T>): Promise<T>;
  /** The signal the driver stops on (the user's Ctrl-C, or one bridged from it). */
  stopSignal(stop: AbortSignal): AbortSignalLike;
  readonly newController?: NewController;
  /** The driver's send tick (bench/driver.ts): real time batches sends, virtual time needs not. */
  readonly sendTickMs?: number;
  /** Redraw the status line every second (pointless when a second of the run takes microseconds). */
  readonly liveStatus: boolean;
  /** Facts for manifest.json beyond the lab's topology. */
  readonly manifest?: Record<string, unknown>;
  /**
   * Changes in the lab the run did not ask for, each written to the event log as it is seen
   * (`note`), from the clock's start until the faults are undone (a swarm replacing a task).
   */
  watch?(clock: Clock, note: (event: object) => void): { stop(): Promise<void> };
}

/** What building a lab needs beyond the experiment: its seed, where its log goes, who journals its processes. */
export interface LabOptions {
  readonly seed: number;
  readonly logFile?: string;
  /** Called whenever the lab's processes change (to journal its teardown recipe). */
  readonly onProcessesChanged?: () => void;
  /** docker: the compose project (default: the default project). */
  readonly docker?: ComposeOptions | undefined;
  /** local: pin the generator and the lab to disjoint CPUs (absent: from 4 CPUs; true: --pin; false: --no-pin). */
  readonly pin?: boolean;
}

/** What building a run's runtime needs beyond the plan. */
export interface RuntimeOptions {
  /**
   * The longest one origin can stay in flight under the plan's client model (the run code
   * derives it): the simulation bounds its virtual time with it.
   */
  readonly worstOriginMs: number;
  /**
   * The simulation: draw each attempt's work by its origin and attempt number, not in
   * service order, so two runs of one plan that serve requests in different orders (a
   * lateness replay, orchestrator/run/replay.ts) draw the same work. Real runtimes ignore it.
   */
  readonly keyedDraws?: boolean;
  /** Called whenever the lab's processes change (to journal its teardown recipe). */
  readonly onProcessesChanged?: () => void;
  /** docker: the compose project. */
  readonly docker?: ComposeOptions | undefined;
  /** local: pin the generator and the lab to disjoint CPUs (absent: from 4 CPUs; true: --pin; false: --no-pin). */
  readonly pin?: boolean;
}

/**
 * What a runtime can do, declared, so the CLI and validation ask it instead of comparing
 * runtime names (a new runtime states its own; nothing else changes).
 */
/** Every class of trigger, each with every kind of it: a runtime that acts through the whole Lab interface and on this machine. */
export const EVERY_TRIGGER: RuntimeCapabilities['triggers'] = everyTriggerBut();

/** Every class of trigger but `classes` (the local runtime has no container interface to put netem on). */
export function everyTriggerBut(...classes: TargetClass[]): RuntimeCapabilities['triggers'] {
  return Object.fromEntries(
    TARGET_CLASSES.filter((c) => !classes.includes(c)).map((c) => [c, 'all' as const]),
  );
}

export interface RuntimeCapabilities {
  /**
   * Which trigger kinds it applies, by the class of thing they act on (kind.ts, `acts`):
   * `all` is every registered kind of that class (what goes through the Lab interface
   * alone, a new kind included); a list names the kinds; an absent class, none.
   */
  readonly triggers: { readonly [C in TargetClass]?: 'all' | readonly string[] };
  /** It runs in virtual time (the simulation): no lab to twin, points may run in parallel. */
  readonly virtualTime: boolean;
  /** It drives a Compose project through a Docker engine (--project, --env-file, the engine's address). */
  readonly compose: boolean;
  /** Its lab runs on this machine, beside the load generator (its load is checked before a run). */
  readonly labOnThisMachine: boolean;
  /**
   * It runs the clients' link to the api (`link: api`, `api[i]`, lab.api.link: the load
   * through the fault proxy, lab/apiLink.ts); where it does not, refuseOn refuses a run
   * that needs it, by field.
   */
  readonly apiLink: boolean;
}

/** An undo recipe of one kind, and how to run it (returns a sentence saying what it did). */
type UndoRunners = { readonly [K in UndoRecipe['kind']]?: (u: Extract<UndoRecipe, { kind: K }>) => string };

export interface RuntimePlugin {
  readonly name: Runtime;
  readonly capabilities: RuntimeCapabilities;
  /** A run's runtime on this plan: the lab, its clock and transport, the service's series; `dir` is the run folder. */
  run(plan: RunPlan, dir: string, o: RuntimeOptions): RunRuntime;
  /**
   * Refuses, before anything runs, an experiment this runtime cannot run as declared (a
   * SpecError naming `file` and each field); absent where it runs every experiment.
   */
  readonly refuse?: (e: Experiment, file: string | undefined) => void;
  /** The lab alone, for commands that drive it themselves (calibrate); absent where there is no lab to measure. */
  readonly lab?: (e: Experiment, o: LabOptions) => Lab;
  /** Runs the fault journal's recipes of kinds only this runtime writes (docker: unpause, start). */
  readonly undo?: UndoRunners;
}

const registered = new Map<Runtime, RuntimePlugin>();

/** Called by the composition root; a second plugin of the same name replaces the first. */
export function registerRuntime(p: RuntimePlugin): void {
  registered.set(p.name, p);
}

export function runtimePlugin(name: Runtime): RuntimePlugin {
  const p = registered.get(name);
  if (!p)
    throw new Error(
      `runtime "${name}" is not registered (the composition root, orchestrator/cli/runtimes.ts, registers ${RUNTIMES.join(', ')})`,
    );
  return p;
}

/** Whether the runtime applies a trigger of this kind (by the class it acts on). */
export function appliesTrigger(p: Pick<RuntimePlugin, 'capabilities'>, kind: string): boolean {
  const on = p.capabilities.triggers[triggerKind(kind).acts];
  return on === 'all' || (on !== undefined && on.includes(kind));
}

/**
 * Refuses, before anything runs, an experiment the runtime cannot run: what its own `refuse`
 * says (its more specific words come first: the simulation names the toxic it does not
 * model), then a trigger it does not apply by its capabilities. A SpecError naming `file`
 * and each field.
 */
export function refuseOn(p: RuntimePlugin, e: Experiment, file: string | undefined): void {
  p.refuse?.(e, file);
  const where = file ?? `experiment ${e.name}`;
  const at = (i: number, field: string): string =>
    `schedule.${e.schedule.writtenAs === 'trigger' ? 'trigger' : `triggers.${i}`}.${field}`;
  const issues = e.schedule.triggers.flatMap((t, i) => {
    if (!p.capabilities.apiLink && 'link' in t && parseApiLink(t.link))
      return [
        { file: where, path: at(i, 'link'), message: `${t.kind} on link ${t.link}: ${noApiLink(p.name)}` },
      ];
    if (appliesTrigger(p, t.kind)) return [];
    const acts = triggerKind(t.kind).acts;
    const on = p.capabilities.triggers[acts];
    const can =
      on === undefined ? `no trigger that acts on ${ACTS[acts]}` : on === 'all' ? 'them all' : on.join(', ');
    return [
      {
        file: where,
        path: at(i, 'kind'),
        message: `the ${p.name} runtime cannot apply a ${t.kind} trigger (it acts on ${ACTS[acts]}; the ${p.name} runtime applies ${can})`,
      },
    ];
  });
  if (!p.capabilities.apiLink && e.lab?.api.link === true)
    issues.push({ file: where, path: 'lab.api.link', message: noApiLink(p.name) });
  if (issues.length > 0) throw new SpecError(issues);
}

/** Why a runtime without the api link refuses a run that needs it. */
function noApiLink(runtime: string): string {
  return `the ${runtime} runtime does not run the clients' link to the api (its fault proxy publishes no listener for it): run it on the local, docker or swarm runtime (--runtime local, docker, swarm) or in the simulation`;
}

/** A target class in words. */
const ACTS: { readonly [C in TargetClass]: string } = {
  process: "a component's process",
  capacity: "the api's run-time capacity switch",
  cpu: "a component's CPU quota",
  link: 'a link through the fault proxy',
  load: 'the offered load',
  cache: "the cache's content",
  provider: "the LLM provider's switch",
  host: 'the machine the orchestrator runs on',
  interface: "a container's network interface (tc netem, set from this host: the docker runtime)",
};

/** The runner of an undo recipe kind that a registered runtime owns, if one does. */
export function undoRunner<K extends UndoRecipe['kind']>(
  kind: K,
): ((u: Extract<UndoRecipe, { kind: K }>) => string) | undefined {
  for (const p of registered.values()) {
    const run = p.undo?.[kind];
    if (run) return run as (u: Extract<UndoRecipe, { kind: K }>) => string;
  }
  return undefined;
}
