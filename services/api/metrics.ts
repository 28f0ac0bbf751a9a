import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The api's Prometheus metrics. Names are part of the contract with the orchestrator's scraper and Grafana. */
export function createApiMetrics(pool: { busyWorkers: number; queueDepth: number; workers: number }) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
  return {
    registry,
    received: new Counter({
      name: 'api_requests_received_total',
      help: 'Requests that reached the service (every attempt the client sent and the service read).',
      registers: [registry],
    }),
    completed: new Counter({
      name: 'api_requests_completed_total',
      help: 'Requests the service finished, by HTTP status.',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    wasted: new Counter({
      name: 'api_wasted_work_total',
      help: 'Requests finished after their client had already gone away (work nobody wanted).',
      registers: [registry],
    }),
    rejected: new Counter({
      name: 'api_rejected_total',
      help: 'Requests refused on purpose without doing their work (503 with x-shed), by reason.',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    queueWait: new Histogram({
      name: 'api_queue_wait_seconds',
      help: 'Time a request waited for a worker.',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    serviceTime: new Histogram({
      name: 'api_service_seconds',
      help: 'Time a worker spent on a request.',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'api_queue_depth',
      help: 'Requests waiting for a worker.',
      registers: [registry],
      collect() {
        this.set(pool.queueDepth);
      },
    }),
    busyWorkers: new Gauge({
      name: 'api_busy_workers',
      help: 'Workers busy on a request.',
      registers: [registry],
      collect() {
        this.set(pool.busyWorkers);
      },
    }),
    workers: new Gauge({
      name: 'api_workers',
      help: 'Size of the worker pool.',
      registers: [registry],
      collect() {
        this.set(pool.workers);
      },
    }),
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;
