import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import express from 'express';
import { sampleDuration, type DurationDist } from '../../bench/distributions.js';
import { seededRng } from '../../bench/rng.js';
import { WorkerPool } from './workerPool.js';
import { createApiMetrics } from './metrics.js';

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
}

export interface ApiService {
  readonly server: Server;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * The system under test: a fixed-worker-pool HTTP service.
 *   GET /work     queued for a worker, then sleeps a drawn service time, then 200
 *                 (?cost=NAME draws from that cost class instead; ?key= is accepted)
 *   GET /health   answered at once (not queued): liveness only
 *   GET /metrics  Prometheus text
 */
export async function startApi(cfg: ApiConfig): Promise<ApiService> {
  const pool = new WorkerPool(cfg.workers);
  const metrics = createApiMetrics(pool);
  const rng = seededRng(cfg.seed, 'api-work');
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
    pool.submit({
      enqueuedMs: performance.now(),
      run: async (queueWaitMs) => {
        metrics.queueWait.observe(queueWaitMs / 1000);
        const workMs = sampleDuration(work, rng);
        await sleep(workMs);
        metrics.serviceTime.observe(workMs / 1000);
        metrics.completed.inc({ status: '200' });
        // The work is done even when nobody is waiting for it any more.
        if (req.socket.destroyed) metrics.wasted.inc();
        else res.status(200).type('text/plain').send('ok\n');
      },
    });
  });

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
      }),
  };
}
