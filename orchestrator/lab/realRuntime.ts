import { leanController } from '../../bench/leanAbort.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { overReplicas } from '../../bench/transport/replicas.js';
import { RealClock } from '../../foundation/clock.js';
import { warmUpClock } from '../../foundation/waker.js';
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
    // One endpoint per api replica; the lab has the one api until lab.api.replicas exists.
    transport: (clock) =>
      overReplicas(
        [lab.apiUrl].map((url) => new HttpTransport({ url, connections: connectionCap(plan), clock })),
      ),
    serverSource: (clock) => new Scraper(lab, 'api', clock),
    procSampler: (clock) => new ProcSampler(() => lab.processes(), clock),
    settle: (p) => p,
    stopSignal: (stop) => stop,
    liveStatus: true,
  };
}
