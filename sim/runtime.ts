import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labConfig } from '../orchestrator/lab/labConfig.js';
import type { RunRuntime, RuntimeOptions, RuntimePlugin } from '../orchestrator/lab/RuntimePlugin.js';
import { connectionCap, type RunPlan } from '../orchestrator/spec/plan.js';
import { leanController } from '../bench/leanAbort.js';
import { overReplicas } from '../bench/transport/replicas.js';
import { replicaServerSource } from '../orchestrator/scrape/replicaSeries.js';
import { refuseUnsimulable } from './refusals.js';
import { SimClock } from './clock.js';
import { SimLab } from './SimLab.js';
import { SimServerSeries } from './series.js';
import { SimTransport } from './transport.js';
import { SIM_TOXICS } from './link.js';

/**
 * The simulation runtime of `metabench run --runtime sim`: the experiment's lab as a
 * SimLab on a SimClock, the load generator's HTTP client as a SimTransport, the api's
 * own counters for its series. runOnce runs the recorder, client policies, driver and
 * triggers over them exactly as over the local lab.
 */
export function simRuntime(
  plan: RunPlan,
  o: Pick<RuntimeOptions, 'worstOriginMs' | 'keyedDraws'>,
  dir?: string,
): RunRuntime & { readonly sim: { clock: SimClock; lab: SimLab } } {
  const e = plan.experiment;
  // What it cannot model (an LLM provider, some toxics) is refused, by file and field.
  refuseUnsimulable(e, plan.sourceFile);
  const clock = new SimClock();
  // The lab every runtime builds (labConfig.ts), here as simulated processes.
  const { cache, llm: _none, ...api } = labConfig(e, plan.seed);
  const lab = new SimLab(clock, {
    ...api,
    ...(o.keyedDraws ? { keyedWorkSeed: plan.seed } : {}),
    ...(cache
      ? {
          // The lab's Redis keeps whole seconds of TTL.
          cache: {
            ttlMs: cache.ttlS * 1000,
            pool: cache.pool,
            queryDelay: cache.queryDelay,
            ...(cache.retry ? { retry: cache.retry } : {}),
          },
          keys: cache.keys,
          prewarm: cache.prewarm,
        }
      : {}),
  });
  const classes = plan.load.mix;
  // Virtual time may run a little past the schedule (the drain, Retry-After); never for ever.
  const limitMs = plan.totalMs + o.worstOriginMs + 600_000;
  if (dir !== undefined)
    writeFileSync(join(dir, 'lab.log'), 'simulated lab (runtime sim): no processes, no output\n');
  return {
    lab,
    sim: { clock, lab },
    clock: () => clock,
    // One transport per api replica, as the lab has one HTTP endpoint per replica.
    transport: () =>
      overReplicas(
        lab.apis.map(
          (api, i) =>
            new SimTransport(clock, api, {
              connections: connectionCap(plan),
              ...(lab.apiLinks[i] ? { link: lab.apiLinks[i] } : {}),
              costOf: (cls) => classes[cls]?.cost,
              ...(o.keyedDraws ? { keyed: true } : {}),
            }),
        ),
      ),
    // Each replica's series read on its own and summed, as the lab's scrapes are.
    serverSource: () =>
      replicaServerSource(lab.apis.map((api) => new SimServerSeries(api, clock, cache !== undefined))),
    procSampler: () => undefined,
    settle: (p) => clock.run(p, limitMs),
    stopSignal: (stop) => {
      // The driver adds a listener to its stop signal per origin: a lean one, bridged once.
      const lean = leanController();
      if (stop.aborted) lean.abort();
      else stop.addEventListener('abort', () => lean.abort(), { once: true });
      return lean.signal;
    },
    newController: leanController,
    liveStatus: false,
    manifest: { simulation: SimLab.assumptions() },
  };
}

/** The sim runtime as the composition root registers it (no lab to calibrate, no undo of its own). */
export const simPlugin: RuntimePlugin = {
  name: 'sim',
  capabilities: {
    triggers: {
      process: 'all',
      capacity: 'all',
      // Its links model some toxics (link.ts) and a partition; it has no LLM provider, and no host to act on in virtual time.
      link: [...SIM_TOXICS.map((t) => t.replace('_', '-')), 'partition'],
      load: 'all',
      cache: 'all',
    },
    virtualTime: true,
    compose: false,
    labOnThisMachine: false,
    apiLink: true,
  },
  run: (plan, dir, o) => simRuntime(plan, o, dir),
  refuse: refuseUnsimulable,
};
