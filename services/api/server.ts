import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Response } from 'express';
import type { DurationDist } from '../../foundation/distributions.js';
import { seededRng } from '../../foundation/rng.js';
import { applyApiState } from './apiState.js';
import { WorkerPool } from './workerPool.js';
import { LISTEN_BACKLOG, poolOptions, type Mitigations } from './poolOptions.js';
import { ReadThroughCache, type ReadThroughConfig } from './readThrough.js';
import { createApiMetrics, type ApiMetrics } from './metrics.js';
import { wallClock, type ApiClock } from './lookup.js';
import {
  WorkHandler,
  handlerRngs,
  type ErrorCost,
  type WorkEvents,
  type WorkRequest,
} from './workHandler.js';
import { registerLlmRoutes, type LlmRoutesConfig } from './llmRoutes.js';
import { deadlineHeaderMs } from './requestLimits.js';

export interface ApiConfig {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly workers: number;
  /** Per-request work, slept (so capacity does not depend on this machine's CPU). */
  readonly work: DurationDist;
  /** Named cost classes (heavier or lighter work), chosen per request with ?cost=NAME. */
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  /** Server-side mitigations, each off by default. */
  readonly mitigations?: Mitigations;
  /** Read-through cache (Redis) in front of a database (Postgres); absent: no cache, no database. */
  readonly cache?: ReadThroughConfig;
  /**
   * Server-side request timeout (ms from arrival, queue wait included): the request is
   * abandoned with 504, together with its database query. Absent: none.
   */
  readonly requestTimeoutMs?: number;
  /** Extra work a worker spends on a request that ends in an error (timeout, dependency failure, deadline drop, optionally a shed). */
  readonly errorCost?: ErrorCost;
  /** An LLM provider (through its link): the /chat, /agent, /retrieve and /ingest routes. */
  readonly llm?: LlmRoutesConfig;
}

export { LISTEN_BACKLOG, poolOptions, type Mitigations } from './poolOptions.js';

/** The bodies of the handler's answers other than 200 and 503 (400 is an unknown cost class). */
const ANSWERS: Readonly<Record<number, string>> = { 500: 'database error\n', 504: 'server timeout\n' };

/** One /work request on its express response. */
class ExpressWork implements WorkRequest {
  constructor(
    readonly cost: string | undefined,
    readonly key: number | undefined,
    readonly deadlineHeaderMs: number | undefined,
    readonly res: Response,
  ) {}

  get gone(): boolean {
    return this.res.req.socket.destroyed;
  }
}

/** The handler's events as the api's Prometheus metrics. */
function workEvents(m: ApiMetrics): WorkEvents {
  return {
    received: () => m.received.inc(),
    completed: (status) => m.completed.inc({ status: String(status) }),
    rejected: (reason) => m.rejected.inc({ reason }),
    timedOut: () => m.timedOut.inc(),
    wasted: () => m.wasted.inc(),
    queueWait: (ms) => m.queueWait.observe(ms / 1000),
    serviceTime: (ms) => m.serviceTime.observe(ms / 1000),
    errorPath: (kind, ms) => m.errorPathSeconds.inc({ kind }, ms / 1000),
  };
}

export interface ApiService {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The system under test: a fixed-worker-pool HTTP service.
 *   GET /work     queued for a worker, then sleeps a drawn service time, then 200
 *                 (?cost=NAME draws from that cost class instead); with a cache, ?key=K
 *                 is looked up first (read-through: Redis, then Postgres on a miss)
 *   GET /health   answered at once (not queued): liveness only
 *   GET /metrics  Prometheus text
 *   GET|PUT|POST /_api/state  the capacity triggers' switch: { workFactor, workers }
 */
export async function startApi(
  cfg: ApiConfig,
  /** The clock of the request path: wall time (performance.now, Node's timers) unless a test injects one. */
  clock: ApiClock = wallClock,
): Promise<ApiService> {
  const pool = new WorkerPool(cfg.workers, { ...poolOptions(cfg.mitigations), now: () => clock.now() });
  let cache: ReadThroughCache | undefined;
  const metrics = createApiMetrics(pool, cfg.cache ? () => cache : undefined);
  if (cfg.cache) {
    cache = new ReadThroughCache(cfg.cache, metrics, seededRng(cfg.seed, 'api-db'), clock);
    await cache.open();
  }
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');

  app.get('/health', (_req, res) => {
    res.json({ ok: true, workers: cfg.workers });
  });

  app.get('/metrics', async (_req, res) => {
    res.set('content-type', metrics.registry.contentType);
    res.send(await metrics.registry.metrics());
  });

  const handler = new WorkHandler<ExpressWork>(
    { work: cfg.work, costs: cfg.costs, requestTimeoutMs: cfg.requestTimeoutMs, errorCost: cfg.errorCost },
    pool,
    clock,
    handlerRngs(cfg.seed),
    workEvents(metrics),
    cache,
    (w, status, shed) => {
      if (w.gone) return;
      const res = w.res;
      if (status === 200) res.status(200).type('text/plain').send('ok\n');
      else if (status === 503) res.status(503).set('x-shed', shed).type('text/plain').send(`shed: ${shed}\n`);
      else
        res
          .status(status)
          .type('text/plain')
          .send(ANSWERS[status] ?? `unknown cost class "${w.cost}"\n`);
    },
  );

  // The capacity triggers' run-time switch (slowdown, workers), as the LLM stub's /_stub/state
  // is the provider's: the orchestrator sets it for a trigger's window and back after it.
  const state = () => ({
    workFactor: handler.workFactor,
    workers: pool.workers,
    nominalWorkers: cfg.workers,
  });
  app.get('/_api/state', (_req, res) => {
    res.json(state());
  });
  const setState = (req: express.Request, res: express.Response): void => {
    const problem = applyApiState(req.body as unknown, handler, pool, cfg.workers);
    if (problem) res.status(400).type('text/plain').send(`${problem}\n`);
    else res.json(state());
  };
  app.put('/_api/state', express.json(), setState);
  app.post('/_api/state', express.json(), setState);

  app.all('/work', (req, res) => {
    const costName = typeof req.query['cost'] === 'string' ? req.query['cost'] : undefined;
    const keyParam = req.query['key'];
    const key = typeof keyParam === 'string' ? Number(keyParam) : undefined;
    if (key !== undefined && !(Number.isSafeInteger(key) && key >= 0)) {
      metrics.received.inc();
      res
        .status(400)
        .type('text/plain')
        .send(`key must be a whole number >= 0 (got "${String(keyParam)}")\n`);
      metrics.completed.inc({ status: '400' });
      return;
    }
    handler.handle(new ExpressWork(costName, key, deadlineHeaderMs(req.headers), res));
  });

  const llm = cfg.llm
    ? registerLlmRoutes(
        app,
        cfg.llm,
        metrics,
        metrics.registry,
        seededRng(cfg.seed, 'api-llm'),
        () => cache,
        { requestTimeoutMs: cfg.requestTimeoutMs, deadlineDrop: cfg.mitigations?.deadlineDrop },
      )
    : undefined;

  const server = createServer(app);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: cfg.host, port: cfg.port, backlog: LISTEN_BACKLOG }, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      })
        .then(() => llm?.close())
        .then(() => cache?.close()),
  };
}
