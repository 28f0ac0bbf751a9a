import { leanController } from '../../bench/leanAbort.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { overReplicas } from '../../bench/transport/replicas.js';
import { RealClock } from '../../foundation/clock.js';
import { warmUpClock } from '../../foundation/waker.js';
import { replicaServerSource } from '../scrape/replicaSeries.js';
import { Scraper } from '../scrape/scraper.js';
import { connectionCap, type RunPlan } from '../spec/plan.js';
import type { Lab } from './Lab.js';
import { ProcSampler } from './proc/procSampler.js';
import type { RunRuntime } from './RuntimePlugin.js';

/**
 * A real lab's runtime, the same for the local and the docker runtime: real time, HTTP,
 * scraped metrics, /proc. `makeLab` builds the lab once the clock's waker is warming up.
 */
export function realRuntime(plan: RunPlan, makeLab: () => Lab): RunRuntime {
  // The waker's thread starts now, while the lab comes up, not in the run's first second.
  warmUpClock();
  const lab = makeLab();
  return {
    lab,
    clock: () => new RealClock(),
    newController: leanController,
    // One endpoint per api replica (one for a lab of one api), each with its own connections.
    transport: (clock) =>
      overReplicas(
        lab.apiUrls.map((url) => new HttpTransport({ url, connections: connectionCap(plan), clock })),
      ),
    // Each replica scraped on its own, their series summed (scrape/replicaSeries.ts).
    serverSource: (clock) =>
      lab.apiUrls.length === 1
        ? new Scraper(lab, 'api', clock)
        : replicaServerSource(lab.apiUrls.map((_, i) => new Scraper(lab, `api[${i}]`, clock))),
    procSampler: (clock) => new ProcSampler(() => lab.processes(), clock),
    settle: (p) => p,
    stopSignal: (stop) => stop,
    liveStatus: true,
  };
}
