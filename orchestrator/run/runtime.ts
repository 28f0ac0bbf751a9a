import { join } from 'node:path';
import { RealClock, type Clock } from '../../bench/clock.js';
import type { NewController } from '../../bench/abort.js';
import type { Transport } from '../../bench/transport/Transport.js';
import { HttpTransport } from '../../bench/transport/http.js';
import type { Lab } from '../lab/Lab.js';
import { apiMitigations, labCacheConfig } from '../lab/labConfig.js';
import { LocalLab } from '../lab/local/LocalLab.js';
import { ProcSampler } from '../lab/local/procSampler.js';
import type { Runtime } from '../lab/runtimes.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { Scraper } from '../scrape/scraper.js';
import { toDurationDist } from '../spec/fields.js';
import { connectionCap, type RunPlan } from '../spec/plan.js';
import { simRuntime } from '../../sim/runtime.js';

/** The service's per-bucket series: scraped from /metrics in the lab, read off its counters in the simulation. */
export interface ServerSource {
  start(): void;
  stop(): Promise<ServerSeries>;
  /** Samples taken; the series is used only when there were at least two. */
  readonly scrapes: number;
}

/**
 * What differs between running an experiment on the lab and simulating it; runOnce
 * does the rest the same way for both (recorder, client policies, driver, triggers,
 * the results files).
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
  stopSignal(stop: AbortSignal): AbortSignal;
  readonly newController?: NewController;
  /** Redraw the status line every second (pointless when a second of the run takes microseconds). */
  readonly liveStatus: boolean;
  /** Facts for manifest.json beyond the lab's topology. */
  readonly manifest?: Record<string, unknown>;
}

const factories: Record<Runtime, (plan: RunPlan, dir: string) => RunRuntime> = {
  local: localRuntime,
  sim: simRuntime,
};

export function makeRuntime(name: Runtime, plan: RunPlan, dir: string): RunRuntime {
  return factories[name](plan, dir);
}

/** The local lab: child processes on loopback, real time, HTTP, scraped metrics, /proc. */
export function localRuntime(plan: RunPlan, dir: string): RunRuntime {
  const e = plan.experiment;
  const lab = new LocalLab({
    host: '127.0.0.1',
    apiPort: 0,
    workers: e.lab.api.workers,
    work:
      e.lab.api.work.dist === 'lognormal'
        ? { dist: 'lognormal', meanMs: e.lab.api.work.mean, sigma: e.lab.api.work.sigma ?? 1 }
        : { dist: e.lab.api.work.dist, meanMs: e.lab.api.work.mean },
    ...(e.lab.api.costs
      ? { costs: Object.fromEntries(Object.entries(e.lab.api.costs).map(([k, d]) => [k, toDurationDist(d)])) }
      : {}),
    seed: plan.seed,
    mitigations: apiMitigations(e.lab.api),
    ...labCacheConfig(e.lab),
    logFile: join(dir, 'lab.log'),
  });
  return {
    lab,
    clock: () => new RealClock(),
    transport: (clock) => new HttpTransport({ url: lab.apiUrl, connections: connectionCap(plan), clock }),
    serverSource: (clock) => new Scraper(lab, 'api', clock),
    procSampler: (clock) => new ProcSampler(() => lab.processes(), clock),
    settle: (p) => p,
    stopSignal: (stop) => stop,
    liveStatus: true,
  };
}
