import { join } from 'node:path';
import { RealClock, type Clock } from '../../foundation/clock.js';
import type { NewController } from '../../bench/abort.js';
import { leanController } from '../../bench/leanAbort.js';
import { warmUpClock } from '../../foundation/waker.js';
import type { Transport } from '../../bench/transport/Transport.js';
import { HttpTransport } from '../../bench/transport/http.js';
import type { Lab } from '../lab/Lab.js';
import { createLab } from '../lab/createLab.js';
import type { ComposeOptions } from '../lab/docker/compose.js';
import { ProcSampler } from '../lab/proc/procSampler.js';
import type { Runtime } from '../lab/runtimes.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { Scraper } from '../scrape/scraper.js';
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

/** What building a lab needs beyond the plan: where its log goes, and who journals its processes. */
export interface RuntimeOptions {
  /** Called whenever the lab's processes change (to journal its teardown recipe). */
  readonly onProcessesChanged?: () => void;
  /** docker: the compose project. */
  readonly docker?: ComposeOptions | undefined;
}

const factories: Record<Runtime, (plan: RunPlan, dir: string, o: RuntimeOptions) => RunRuntime> = {
  local: (plan, dir, o) => realRuntime('local', plan, dir, o),
  docker: (plan, dir, o) => realRuntime('docker', plan, dir, o),
  sim: (plan, dir) => simRuntime(plan, dir),
};

export function makeRuntime(name: Runtime, plan: RunPlan, dir: string, o: RuntimeOptions = {}): RunRuntime {
  return factories[name](plan, dir, o);
}

/** A real lab (child processes, or the Docker Compose lab): real time, HTTP, scraped metrics, /proc. */
export function realRuntime(
  runtime: 'local' | 'docker',
  plan: RunPlan,
  dir: string,
  o: RuntimeOptions = {},
): RunRuntime {
  // The waker's thread starts now, while the lab comes up, not in the run's first second.
  warmUpClock();
  const lab = createLab(runtime, plan.experiment, {
    seed: plan.seed,
    logFile: join(dir, 'lab.log'),
    ...(o.onProcessesChanged ? { onProcessesChanged: o.onProcessesChanged } : {}),
    ...(o.docker ? { docker: o.docker } : {}),
  });
  return {
    lab,
    clock: () => new RealClock(),
    newController: leanController,
    transport: (clock) => new HttpTransport({ url: lab.apiUrl, connections: connectionCap(plan), clock }),
    serverSource: (clock) => new Scraper(lab, 'api', clock),
    procSampler: (clock) => new ProcSampler(() => lab.processes(), clock),
    settle: (p) => p,
    stopSignal: (stop) => stop,
    liveStatus: true,
  };
}
