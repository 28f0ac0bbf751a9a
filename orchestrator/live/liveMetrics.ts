import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { FAILURE_KINDS } from '../../bench/outcome.js';

import type { Attempt, AttemptResult, Origin } from '../../bench/outcome.js';
import { Recorder } from '../../bench/record/Recorder.js';
import { processName, type LabProcess } from '../lab/Lab.js';
import { readProcUsage, type ProcUsage } from '../lab/proc/procUsage.js';

/**
 * The orchestrator's client-side metrics while a run is in progress, in Prometheus's
 * terms (what Grafana shows next to the api's): origins offered, attempts, goodput,
 * origin failures by kind, response times of successes (from the intended time), and
 * the CPU and memory of each lab process (per container in the docker runtime). Names
 * are part of the contract with grafana/dashboards/metabench.json.
 */
export function createLiveMetrics(processes: () => readonly LabProcess[] = () => []) {
  const registry = new Registry();
  const cpuSeen = new Map<string, { pid: number; cpu: number }>();
  let usage: Map<number, ProcUsage> = new Map();
  const m = {
    registry,
    offered: new Counter({
      name: 'metabench_offered_total',
      help: 'Origin requests created by the open-loop arrival process (at their intended time).',
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'metabench_attempts_total',
      help: 'Attempts finished (first tries, retries, hedges), client side.',
      registers: [registry],
    }),
    goodput: new Counter({
      name: 'metabench_goodput_total',
      help: 'Origins the client saw succeed within their deadline.',
      registers: [registry],
    }),
    failures: new Counter({
      name: 'metabench_failures_total',
      help: 'Origins that ended in failure, by kind.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    response: new Histogram({
      name: 'metabench_response_seconds',
      help: 'Response time of successful origins: completion minus intended time (coordinated-omission correct).',
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    inFlight: new Gauge({
      name: 'metabench_in_flight',
      help: 'Origins offered and not yet ended.',
      registers: [registry],
    }),
    cpu: new Counter({
      name: 'metabench_component_cpu_seconds_total',
      help: 'CPU time used by a lab component (its process tree; a container in the docker runtime).',
      labelNames: ['component'] as const,
      registers: [registry],
      collect() {
        // Read once per scrape, for this counter and the memory gauge.
        const procs = processes();
        usage = readProcUsage(procs.map((p) => p.pid));
        for (const p of procs) {
          const u = usage.get(p.pid);
          if (!u) continue;
          // An api replica is its own series (api0, api1…), as in timeseries.csv.
          const name = processName(p);
          const prev = cpuSeen.get(name);
          // A new pid (a restarted component) starts from its own zero: only increases count.
          const delta = prev && prev.pid === p.pid ? u.cpuSeconds - prev.cpu : u.cpuSeconds;
          if (delta > 0) this.inc({ component: name }, delta);
          cpuSeen.set(name, { pid: p.pid, cpu: u.cpuSeconds });
        }
      },
    }),
    memory: new Gauge({
      name: 'metabench_component_memory_bytes',
      help: 'Resident memory of a lab component (its process tree).',
      labelNames: ['component'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of processes()) {
          const u = usage.get(p.pid);
          if (u) this.set({ component: processName(p) }, u.rssBytes);
        }
      },
    }),
  };
  for (const kind of FAILURE_KINDS) m.failures.inc({ kind }, 0);
  return m;
}

export type LiveMetrics = ReturnType<typeof createLiveMetrics>;

/** A Recorder that also counts into the live metrics (same calls, same order). */
export class LiveRecorder extends Recorder {
  private metrics: LiveMetrics | undefined;

  /** Set once constructed: the base constructor must not see the metrics. */
  observe(live: LiveMetrics): this {
    this.metrics = live;
    return this;
  }

  override offered(o: Origin): void {
    super.offered(o);
    if (this.metrics) {
      this.metrics.offered.inc();
      this.metrics.inFlight.inc();
    }
  }

  override attempt(a: Attempt, r: AttemptResult, started?: number): void {
    super.attempt(a, r, started);
    this.metrics?.attempts.inc();
  }

  override outcome(o: Origin, r: AttemptResult): void {
    super.outcome(o, r);
    const live = this.metrics;
    if (!live) return;
    live.inFlight.dec();
    if (r.kind === 'ok' && r.endMs <= o.deadlineMs) {
      live.goodput.inc();
      live.response.observe((r.endMs - o.intendedMs) / 1000);
    } else live.failures.inc({ kind: r.kind === 'ok' ? 'deadline-exceeded' : r.kind });
  }
}
