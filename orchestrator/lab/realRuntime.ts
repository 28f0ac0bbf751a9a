import { SEND_TICK_MS } from '../../bench/driver.js';
import { leanController } from '../../bench/leanAbort.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { overReplicas } from '../../bench/transport/replicas.js';
import { RealClock } from '../../foundation/clock.js';
import { warmUpClock } from '../../foundation/waker.js';
import { replicaServerSource } from '../scrape/replicaSeries.js';
import { ProviderScraper, Scraper, systemSeries } from '../scrape/scraper.js';
import { systemUrl } from '../spec/sections/system.js';
import { connectionCap, type RunPlan } from '../spec/plan.js';
import type { Lab } from './Lab.js';
import { ProcSampler } from './proc/procSampler.js';
import type { RunRuntime, ServerSource } from './RuntimePlugin.js';

/**
 * A real lab's runtime, the same for the local and the docker runtime: real time, HTTP,
 * scraped metrics, /proc. `makeLab` builds the lab once the clock's waker is warming up.
 */
export function realRuntime(plan: RunPlan, makeLab: () => Lab): RunRuntime {
  // The waker's thread starts now, while the lab comes up, not in the run's first second.
  warmUpClock();
  const lab = makeLab();
  const system = plan.experiment.system;
  // Your own system: the load goes to its url's path (the mix's classes give their own).
  const path = system ? systemPath(systemUrl(system)) : undefined;
  return {
    lab,
    clock: () => new RealClock(),
    newController: leanController,
    sendTickMs: SEND_TICK_MS,
    // One endpoint per api replica (one for a lab of one api), each with its own connections;
    // through the api link when the run uses it (the proxy's delay is part of what clients see).
    transport: (clock) =>
      overReplicas(
        (lab.clientUrls ?? lab.apiUrls).map(
          (url) =>
            new HttpTransport({ url, connections: connectionCap(plan), clock, ...(path ? { path } : {}) }),
        ),
      ),
    // Each replica scraped on its own, their series summed (scrape/replicaSeries.ts); the
    // provider's series where the lab has it running (built once the lab is up, so its
    // address is known).
    serverSource: (clock) => {
      // Your own system: its endpoint through the declared mapping, or no server series at all.
      if (system)
        return system.metrics
          ? new Scraper(lab, 'api', clock, 1000, systemSeries(system.metrics))
          : NO_SERVER_SERIES;
      const api: ServerSource =
        lab.apiUrls.length === 1
          ? new Scraper(lab, 'api', clock)
          : replicaServerSource(lab.apiUrls.map((_, i) => new Scraper(lab, `api[${i}]`, clock)));
      return plan.experiment.lab?.llm && lab.llmUrl !== undefined
        ? withProvider(api, new ProviderScraper(lab, clock))
        : api;
    },
    procSampler: (clock) => new ProcSampler(() => lab.processes(), clock),
    settle: (p) => p,
    stopSignal: (stop) => stop,
    liveStatus: true,
  };
}

/** The path and query of a system's url, which each request asks for. */
function systemPath(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

/** A system without a metrics endpoint: nothing scraped (the report says the amplification is client-side only). */
const NO_SERVER_SERIES: ServerSource = {
  start: () => undefined,
  stop: () =>
    Promise.resolve({
      received: [],
      completed: [],
      wasted: [],
      cpuSeconds: [],
      queueDepth: [],
      busyWorkers: [],
      rssBytes: [],
      span: [],
    }),
  scrapes: 0,
};

/**
 * The api's series with the LLM provider's columns among its optional ones (a lab with
 * `lab.llm`): the stub scraped on its own, each second, beside the api. The series is
 * the api's: it counts as measured by the api's scrapes.
 */
function withProvider(api: ServerSource, provider: ProviderScraper): ServerSource {
  return {
    start: () => {
      api.start();
      provider.start();
    },
    get scrapes() {
      return api.scrapes;
    },
    stop: async () => {
      const [series, llm] = await Promise.all([api.stop(), provider.stop()]);
      series.extra = { ...series.extra, ...llm };
      return series;
    },
  };
}
