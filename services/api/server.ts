import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import { seededRng } from '../../foundation/rng.js';
import { WorkerPool, type WorkerPoolOptions } from './workerPool.js';
import { CodelShedder, QueueTimeShedder, type RejectReason } from './shedding.js';
import type { QueueDiscipline } from './queue.js';
import { ReadThroughCache, type ReadThroughConfig } from './readThrough.js';
import { createApiMetrics } from './metrics.js';
import { registerLlmRoutes, type LlmRoutesConfig } from './llmRoutes.js';

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
  /** An LLM provider (through its link): the /chat, /agent, /retrieve and /ingest routes. */
  readonly llm?: LlmRoutesConfig;
}

export interface Mitigations {
  readonly queue?: QueueDiscipline;
  /** Bounded queue: at most this many waiting; more get 503 queue_full. */
  readonly queueBound?: number;
  /** Most requests admitted (waiting + running); more get 503 concurrency. */
  readonly concurrencyLimit?: number;
  /** Shed at pickup the requests that waited longer than this (503 queue_time). */
  readonly shedQueueTimeMs?: number;
  /** CoDel-style shedding on the minimum queueing delay over an interval (503 codel). */
  readonly codel?: { readonly targetMs: number; readonly intervalMs: number };
  /** Drop at pickup, without doing the work, requests whose propagated deadline (x-deadline-ms) passed (503 deadline). */
  readonly deadlineDrop?: boolean;
}

/** The propagated deadline header: the origin's remaining deadline in whole ms at send time. */
export const DEADLINE_HEADER = 'x-deadline-ms';

export function poolOptions(m: Mitigations = {}): WorkerPoolOptions {
  if (m.shedQueueTimeMs !== undefined && m.codel)
    throw new Error('choose one shedding policy: a queue-time limit or CoDel, not both');
  const shedder =
    m.shedQueueTimeMs !== undefined
      ? new QueueTimeShedder(m.shedQueueTimeMs)
      : m.codel
        ? new CodelShedder(m.codel.targetMs, m.codel.intervalMs)
        : undefined;
  return {
    ...(m.queue ? { queue: m.queue } : {}),
    ...(m.queueBound !== undefined ? { queueBound: m.queueBound } : {}),
    ...(m.concurrencyLimit !== undefined ? { concurrencyLimit: m.concurrencyLimit } : {}),
    ...(m.deadlineDrop ? { deadlineDrop: true } : {}),
    ...(shedder ? { shedder } : {}),
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
 */
export async function startApi(cfg: ApiConfig): Promise<ApiService> {
  const pool = new WorkerPool(cfg.workers, poolOptions(cfg.mitigations));
  let cache: ReadThroughCache | undefined;
  const metrics = createApiMetrics(pool, cfg.cache ? () => cache : undefined);
  const rng = seededRng(cfg.seed, 'api-work');
  if (cfg.cache) {
    cache = new ReadThroughCache(cfg.cache, metrics, seededRng(cfg.seed, 'api-db'));
    await cache.open();
  }
  const timeoutMs = cfg.requestTimeoutMs;
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

  app.all('/work', (req, res) => {
    metrics.received.inc();
    const costName = typeof req.query['cost'] === 'string' ? req.query['cost'] : undefined;
    const work = costName === undefined ? cfg.work : cfg.costs?.[costName];
    if (!work) {
      res.status(400).type('text/plain').send(`unknown cost class "${costName}"\n`);
      metrics.completed.inc({ status: '400' });
      return;
    }
    const keyParam = req.query['key'];
    const key = typeof keyParam === 'string' ? Number(keyParam) : undefined;
    if (key !== undefined && !(Number.isSafeInteger(key) && key >= 0)) {
      res
        .status(400)
        .type('text/plain')
        .send(`key must be a whole number >= 0 (got "${String(keyParam)}")\n`);
      metrics.completed.inc({ status: '400' });
      return;
    }
    const arrivedMs = performance.now();
    const timeoutAtMs = timeoutMs === undefined ? Infinity : arrivedMs + timeoutMs;
    const timedOut = (): void => {
      metrics.timedOut.inc();
      metrics.completed.inc({ status: '504' });
      if (!req.socket.destroyed) res.status(504).type('text/plain').send('server timeout\n');
    };
    const deadlineHeader = req.headers[DEADLINE_HEADER];
    const remainingMs = typeof deadlineHeader === 'string' ? Number(deadlineHeader) : NaN;
    pool.submit({
      enqueuedMs: arrivedMs,
      deadlineMs: Number.isFinite(remainingMs) ? arrivedMs + remainingMs : undefined,
      timeoutAtMs: timeoutMs === undefined ? undefined : timeoutAtMs,
      reject: (reason: RejectReason) => {
        if (reason === 'timeout') return timedOut();
        metrics.rejected.inc({ reason });
        metrics.completed.inc({ status: '503' });
        if (!req.socket.destroyed)
          res.status(503).set('x-shed', reason).type('text/plain').send(`shed: ${reason}\n`);
      },
      run: async (queueWaitMs) => {
        metrics.queueWait.observe(queueWaitMs / 1000);
        const t0 = performance.now();
        if (cache && key !== undefined) {
          const got = await cache.lookup(key, timeoutAtMs);
          if (got === 'timeout') return timedOut();
          if (got === 'error') {
            metrics.completed.inc({ status: '500' });
            if (!req.socket.destroyed) res.status(500).type('text/plain').send('database error\n');
            return;
          }
        }
        await sleep(sampleDuration(work, rng));
        metrics.serviceTime.observe((performance.now() - t0) / 1000);
        metrics.completed.inc({ status: '200' });
        // The work is done even when nobody is waiting for it any more.
        if (req.socket.destroyed) metrics.wasted.inc();
        else res.status(200).type('text/plain').send('ok\n');
      },
    });
  });

  const llm = cfg.llm
    ? registerLlmRoutes(app, cfg.llm, metrics, metrics.registry, seededRng(cfg.seed, 'api-llm'), () => cache)
    : undefined;

  const server = createServer(app);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: cfg.host, port: cfg.port, backlog: 511 }, () => resolve());
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
