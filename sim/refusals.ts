import { SpecError } from '../foundation/errors.js';
import type { Experiment } from '../orchestrator/spec/schema.js';
import { SIM_TOXICS } from './link.js';

/**
 * What the simulation refuses to simulate, by field: an experiment it would otherwise
 * run without a part its result rests on. `metabench run --runtime sim` (and --twin)
 * refuse such a file before anything runs; orchestrator/model/agreement.ts reads the
 * same list to leave it out of lab-vs-simulation comparisons.
 */

/** Why the simulation cannot model a part of an experiment: the field, and why. */
export interface SimRefusal {
  /** Dotted field path, e.g. lab.llm or schedule.triggers.1.kind */
  readonly path: string;
  readonly message: string;
}

/**
 * What of an experiment the simulation cannot model, each by its field (empty when it
 * can model all of it). The simulated lab (sim/SimLab.ts) has the api, Redis, Postgres
 * and the links; it has no LLM provider, so an experiment whose lab has one would be
 * simulated without the component its result rests on; and its links model only some
 * of the fault proxy's toxics (sim/link.ts, SIM_TOXICS).
 */
export function simRefusals(e: Experiment): SimRefusal[] {
  const out: SimRefusal[] = [];
  if (!e.lab)
    return [
      {
        path: 'system',
        message:
          'it declares its own system (system:), whose work metabench does not know: the simulation models the built-in lab only',
      },
    ];
  // PHP-FPM and gunicorn behind nginx are each a fixed FIFO pool of constant work whose queue
  // nginx holds (its connections, then the pool's listen queue, bounded at 4096 in both, and
  // held at that bound by a retry storm in both): the simulated api is one, and the twin
  // agrees with both labs (docs/reproductions.md). Not the JVM's heap.
  if (e.lab.api.server === 'jvm')
    out.push({
      path: 'lab.api.server',
      message:
        "its api is the JVM server, whose service slows with the garbage collector's work (the live heap grows with the queue): the simulated api has no heap, so a simulation would leave out the mechanism the result rests on",
    });
  if (e.lab.llm)
    out.push({
      path: 'lab.llm',
      message:
        'its lab has an LLM provider (the stub, its token streams, the api calling it with retries), which the simulated lab does not have: a simulation would run the api without the component the result rests on',
    });
  e.schedule.triggers.forEach((t, i) => {
    if (!('link' in t) || t.kind === 'partition') return;
    // A link trigger kind is its toxic's type with a dash (orchestrator/trigger/registry.ts).
    const type = t.kind.replace('-', '_');
    if ((SIM_TOXICS as readonly string[]).includes(type)) return;
    out.push({
      path: `schedule.${e.schedule.writtenAs === 'trigger' ? 'trigger' : `triggers.${i}`}.kind`,
      message: `the simulated links cannot model the ${type} toxic (they model ${SIM_TOXICS.join(', ')}): run this experiment on the local or docker lab`,
    });
  });
  return out;
}

/**
 * Refuses, before anything runs, to simulate an experiment the simulation cannot model:
 * a SpecError naming the file and each field.
 */
export function refuseUnsimulable(e: Experiment, file: string | undefined): void {
  const refusals = simRefusals(e);
  if (refusals.length === 0) return;
  throw new SpecError(
    refusals.map((r) => ({
      file: file ?? `experiment ${e.name}`,
      path: r.path,
      message: `not simulated (--runtime sim): ${r.message}`,
    })),
  );
}
