import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** The api's Prometheus metrics. Names are part of the contract with the orchestrator's scraper and Grafana. */
export function createApiMetrics(
  pool: { busyWorkers: number; queueDepth: number; workers: number },
  /** The read-through cache's DB pool, when there is one (its gauges are exported only then). */
  db?: () => { poolWaiting: number; poolBusy: number } | undefined,
) {
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
    timedOut: new Counter({
      name: 'api_timed_out_total',
      help: 'Requests abandoned by the server-side request timeout (504), with any DB query or provider call they had running.',
      registers: [registry],
    }),
    errorPathSeconds: new Counter({
      name: 'api_error_path_seconds_total',
      help: 'Worker time spent on the error path of requests that ended in an error (lab.api.errorCost), by kind: timeout, dependency, deadline, shed.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    cacheHits: new Counter({
      name: 'api_cache_hits_total',
      help: 'Cache lookups that hit.',
      registers: [registry],
    }),
    cacheMisses: new Counter({
      name: 'api_cache_misses_total',
      help: 'Cache lookups that missed (the database was asked).',
      registers: [registry],
    }),
    cacheErrors: new Counter({
      name: 'api_cache_errors_total',
      help: 'Cache lookups that failed (treated as misses).',
      registers: [registry],
    }),
    cacheFillErrors: new Counter({
      name: 'api_cache_fill_errors_total',
      help: 'Cache fills that failed after a successful query.',
      registers: [registry],
    }),
    dbQueries: new Counter({
      name: 'api_db_queries_total',
      help: 'Database queries, by result (ok, cancelled by a timeout, error), retries not counted.',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    dbAttempts: new Counter({
      name: 'api_db_attempts_total',
      help: 'Query attempts sent to the database, by kind (first, retry): attempts per query is the amplification toward it.',
      labelNames: ['kind'] as const,
      registers: [registry],
    }),
    dbQueryTime: new Histogram({
      name: 'api_db_query_seconds',
      help: 'Time a miss query held its connection.',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    dbPoolWait: new Histogram({
      name: 'api_db_pool_wait_seconds',
      help: 'Time a miss waited for a database connection.',
      buckets: latencyBuckets,
      registers: [registry],
    }),
    ...(db
      ? {
          dbPoolWaiting: new Gauge({
            name: 'api_db_pool_waiting',
            help: 'Requests waiting for a database connection.',
            registers: [registry],
            collect() {
              this.set(db()?.poolWaiting ?? 0);
            },
          }),
          dbPoolBusy: new Gauge({
            name: 'api_db_pool_busy',
            help: 'Database connections in use.',
            registers: [registry],
            collect() {
              this.set(db()?.poolBusy ?? 0);
            },
          }),
        }
      : {}),
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
