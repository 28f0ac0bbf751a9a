import { sampleDuration, type DurationDist } from '../foundation/distributions.js';
import { seededRng, type Rng } from '../foundation/rng.js';
import type { Mitigations } from '../services/api/server.js';
import { poolOptions } from '../services/api/server.js';
import type { RejectReason } from '../services/api/shedding.js';
import { WorkerPool, type Job, type WorkEnd } from '../services/api/workerPool.js';
import type { SimClock } from './clock.js';
import {
  PG_LOOKUP_MS,
  QueryCanceled,
  SimDbPool,
  SimRedisClient,
  type SimPostgresServer,
  type SimRedisServer,
} from './data.js';
import { SimProcess } from './process.js';

/**
 * The api (services/api/server.ts) in the simulation. The queue disciplines and the
 * mitigations are the api's own code: its WorkerPool, queues and shedders
 * (services/api/workerPool.ts, queue.ts, shedding.ts) run here unchanged on the
 * simulated clock. What the HTTP handler does around them is mirrored line by line:
 * the read-through lookup, the request timeout (checked at pickup and through the
 * lookup, never during the work itself, as in the api), the work slept, and the work
 * done for clients that already left (counted as wasted). Its listening socket is
 * modelled as the kernel has it (see `connect`).
 */

export interface SimApiConfig {
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  readonly mitigations?: Mitigations;
  readonly requestTimeoutMs?: number;
  readonly cache?: { readonly ttlMs: number; readonly pool: number; readonly queryDelay: DurationDist };
}

/**
 * The listen backlog the api asks for (server.listen backlog 511; the kernel's default
 * somaxconn of 4096 does not lower it). A paused api's kernel still completes this many
 * handshakes (and one more); later SYNs are dropped and retried by the client's kernel.
 */
export const ACCEPT_BACKLOG = 511;
/** Linux's SYN retransmissions: 1 s, then doubling (tcp_syn_retries 6). */
export const SYN_RETRY_MS = [1000, 3000, 7000, 15000, 31000, 63000] as const;
/** The connect timeout of the lab's transport (CONNECT_TIMEOUT_MS in bench/transport/http.ts). */
export const CONNECT_TIMEOUT_MS = 60_000;

/** The api's Prometheus counters and gauges (services/api/metrics.ts), as plain numbers. */
export class ApiCounters {
  received = 0;
  /** Every status (the scraper sums api_requests_completed_total over its labels). */
  completed = 0;
  wasted = 0;
  timedOut = 0;
  cacheHits = 0;
  cacheMisses = 0;
  cacheErrors = 0;
  cacheFillErrors = 0;
  dbQueries = 0;
  readonly rejected: Partial<Record<RejectReason, number>> = {};
  /** api_queue_wait_seconds' sum (ms here) and count: the wait of every request a worker took. */
  queueWaitMsSum = 0;
  queueWaitCount = 0;
}

/** One HTTP request (one attempt) as the api sees it; the transport implements it. */
export interface SimRequest {
  /** Path without the query. */
  readonly route: string;
  /** ?cost= */
  readonly cost: string | undefined;
  /** ?key= */
  readonly key: number | undefined;
  /** x-deadline-ms, when the client sent it. */
  readonly deadlineHeaderMs: number | undefined;
  /** The client has gone (its socket destroyed): nobody reads an answer. */
  readonly gone: boolean;
  answer(status: number, shed?: string): void;
  /** The connection was reset (the api died under it). */
  reset(): void;
  /** The connection was refused (the api is down). */
  refuse(): void;
  /** The client gave up connecting (its connect timeout). */
  connectTimedOut(): void;
}

export type Lookup = 'hit' | 'miss' | 'timeout' | 'error';

const DEADLINE = Symbol('deadline');

/**
 * The end of a job's work as WorkerPool sees it (it only calls `then(free, free)` on
 * what `run` returns): the callbacks run synchronously when the work is done.
 */
class WorkDone implements WorkEnd {
  private cbs: (() => void)[] | undefined;
  private settled = false;

  then(onDone: () => void): void {
    if (this.settled) onDone();
    else (this.cbs ??= []).push(onDone);
  }

  settle(): void {
    this.settled = true;
    const cbs = this.cbs;
    this.cbs = undefined;
    if (cbs) for (const f of cbs) f();
  }
}

/**
 * One request as the WorkerPool's job (services/api/workerPool.ts's Job, built as the
 * handler builds it): queued at its arrival, with the request timeout's expiry and the
 * propagated deadline. A class rather than closures: a collapsed api queues hundreds of
 * thousands of them.
 */
class ApiJob implements Job {
  readonly deadlineMs: number | undefined;

  constructor(
    private readonly api: SimApi,
    private readonly req: SimRequest,
    private readonly work: DurationDist,
    readonly enqueuedMs: number,
    readonly timeoutAtMs: number | undefined,
    remainingMs: number | undefined,
  ) {
    this.deadlineMs = remainingMs !== undefined ? enqueuedMs + remainingMs : undefined;
  }

  run(queueWaitMs: number): WorkEnd {
    return this.api.started(this.req, this.work, this.timeoutAtMs ?? Infinity, queueWaitMs);
  }

  reject(reason: RejectReason): void {
    this.api.rejected(this.req, reason);
  }
}

export class SimApi {
  readonly proc: SimProcess;
  readonly counters = new ApiCounters();
  private pool!: WorkerPool;
  private rng!: Rng;
  private dbRng!: Rng;
  private redisClient: SimRedisClient | undefined;
  private dbPool: SimDbPool | undefined;
  /** Requests received (or waiting in the socket backlog) and not answered: what a kill resets. */
  private readonly live = new Set<SimRequest>();
  /** Requests on connections the kernel holds while the api is paused, in arrival order. */
  private backlog: SimRequest[] = [];
  private acceptQueued = 0;
  /** Called when the api dies: the client's kept-alive connections to it are gone. */
  onDied: (() => void) | undefined;
  /** How many times it was started (1 for the first start). */
  starts = 0;
  /** Sees each request's queue wait when a worker takes it (validation against closed forms). */
  observeQueueWait: ((ms: number) => void) | undefined;

  constructor(
    private readonly clock: SimClock,
    private readonly cfg: SimApiConfig,
    private readonly deps?: { readonly redis: SimRedisServer; readonly postgres: SimPostgresServer },
  ) {
    this.proc = new SimProcess('api', clock);
    this.boot();
  }

  /** A fresh process: a new pool, new connections to its dependencies, its seeded streams from the start. */
  private boot(): void {
    this.starts++;
    this.pool = new WorkerPool(this.cfg.workers, {
      ...poolOptions(this.cfg.mitigations),
      now: () => this.clock.now(),
    });
    this.rng = seededRng(this.cfg.seed, 'api-work');
    this.dbRng = seededRng(this.cfg.seed, 'api-db');
    if (this.deps && this.cfg.cache) {
      this.redisClient = new SimRedisClient(this.proc, this.deps.redis);
      this.redisClient.open();
      this.dbPool = new SimDbPool(this.proc, this.deps.postgres, this.cfg.cache.pool);
      this.dbPool.open();
    }
  }

  get queueDepth(): number {
    return this.proc.state === 'down' ? 0 : this.pool.queueDepth;
  }

  get busyWorkers(): number {
    return this.proc.state === 'down' ? 0 : this.pool.busyWorkers;
  }

  get dbPoolWaiting(): number {
    return this.dbPool?.waiting ?? 0;
  }

  get dbPoolBusy(): number {
    return this.dbPool?.busy ?? 0;
  }

  /**
   * A client sends `req`, on a kept-alive connection (`reused`) or a new one:
   * - up: the api reads it at once;
   * - paused: the kernel keeps it in the socket (a kept-alive connection), or completes
   *   the handshake into the accept queue while there is room, and the api reads it on
   *   resume, even if its client has given up by then (wasted work); a SYN beyond the
   *   backlog is dropped and retransmitted 1 s, 3 s, 7 s … later;
   * - down: refused.
   */
  connect(req: SimRequest, reused: boolean): void {
    switch (this.proc.state) {
      case 'up':
        this.receive(req);
        return;
      case 'paused':
        if (reused || this.acceptQueued <= ACCEPT_BACKLOG) {
          if (!reused) this.acceptQueued++;
          this.backlog.push(req);
          this.live.add(req);
        } else this.synRetry(req, this.clock.now(), 0);
        return;
      case 'down':
        req.refuse();
        return;
    }
  }

  private synRetry(req: SimRequest, firstMs: number, k: number): void {
    const at = firstMs + (SYN_RETRY_MS[k] ?? Infinity);
    if (at - firstMs >= CONNECT_TIMEOUT_MS) {
      this.clock.timer(firstMs + CONNECT_TIMEOUT_MS, () => {
        if (!req.gone) req.connectTimedOut();
      });
      return;
    }
    this.clock.timer(at, () => {
      if (req.gone) return;
      if (this.proc.state === 'paused' && this.acceptQueued > ACCEPT_BACKLOG)
        this.synRetry(req, firstMs, k + 1);
      else this.connect(req, false);
    });
  }

  /** The api's handler for one request (services/api/server.ts, app.all('/work')). */
  private receive(req: SimRequest): void {
    const m = this.counters;
    m.received++;
    if (req.route !== '/work') {
      // /health answers at once; nothing else is routed (express's 404).
      req.answer(req.route === '/health' ? 200 : 404);
      return;
    }
    const work = req.cost === undefined ? this.cfg.work : this.cfg.costs?.[req.cost];
    if (!work) {
      m.completed++;
      req.answer(400);
      return;
    }
    this.live.add(req);
    const arrivedMs = this.clock.now();
    const rt = this.cfg.requestTimeoutMs;
    this.pool.submit(
      new ApiJob(
        this,
        req,
        work,
        arrivedMs,
        rt === undefined ? undefined : arrivedMs + rt,
        req.deadlineHeaderMs,
      ),
    );
  }

  /** The pool refused the job without running it. */
  rejected(req: SimRequest, reason: RejectReason): void {
    if (reason === 'timeout') return this.timedOut(req);
    const m = this.counters;
    m.rejected[reason] = (m.rejected[reason] ?? 0) + 1;
    m.completed++;
    this.respond(req, 503, reason);
  }

  /** A worker took the job. */
  started(req: SimRequest, work: DurationDist, timeoutAtMs: number, queueWaitMs: number): WorkEnd {
    const m = this.counters;
    m.queueWaitMsSum += queueWaitMs;
    m.queueWaitCount++;
    this.observeQueueWait?.(queueWaitMs);
    return this.run(req, work, timeoutAtMs);
  }

  private run(req: SimRequest, work: DurationDist, timeoutAtMs: number): WorkEnd {
    if (!(this.dbPool && req.key !== undefined)) {
      // Without a cache lookup the handler is only the work. Its worker is freed right
      // after the answer, at the same instant and before anything the answer sets off
      // at the client (which, in the lab, is another process): a settled-at-once
      // thenable instead of a promise, so no microtask comes between.
      const done = new WorkDone();
      this.proc.at(this.clock.now() + sampleDuration(work, this.rng), () => {
        this.worked(req);
        done.settle();
      });
      return done;
    }
    return this.runWithLookup(req, work, timeoutAtMs);
  }

  private async runWithLookup(req: SimRequest, work: DurationDist, timeoutAtMs: number): Promise<void> {
    const got = await this.lookup(req.key!, timeoutAtMs);
    if (got === 'timeout') return this.timedOut(req);
    if (got === 'error') {
      this.counters.completed++;
      this.respond(req, 500);
      return;
    }
    await this.sleep(sampleDuration(work, this.rng));
    this.worked(req);
  }

  private worked(req: SimRequest): void {
    const m = this.counters;
    m.completed++;
    // The work is done even when nobody is waiting for it any more.
    if (req.gone) {
      m.wasted++;
      this.live.delete(req);
    } else this.respond(req, 200);
  }

  timedOut(req: SimRequest): void {
    this.counters.timedOut++;
    this.counters.completed++;
    this.respond(req, 504);
  }

  private respond(req: SimRequest, status: number, shed?: string): void {
    this.live.delete(req);
    if (!req.gone) req.answer(status, shed);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.proc.at(this.clock.now() + ms, resolve));
  }

  /** The read-through lookup (services/api/readThrough.ts, ReadThroughCache.lookup). */
  private async lookup(key: number, deadlineMs: number): Promise<Lookup> {
    const m = this.counters;
    const redis = this.redisClient!;
    const pool = this.dbPool!;
    let cached: boolean;
    try {
      cached = await this.withDeadline(redis.get(key), deadlineMs);
    } catch (err) {
      if (err === DEADLINE) return 'timeout';
      m.cacheErrors++;
      cached = false; // the cache is down: fall through to the database
    }
    if (cached) {
      m.cacheHits++;
      return 'hit';
    }
    m.cacheMisses++;
    const client = await pool.acquire(deadlineMs);
    if (!client) return 'timeout';
    const leftMs = Math.floor(deadlineMs - this.clock.now());
    if (leftMs < 1) {
      pool.release(client);
      return 'timeout';
    }
    const delayMs = sampleDuration(this.cfg.cache!.queryDelay, this.dbRng);
    const query = client.query(Number.isFinite(leftMs) ? leftMs : 0, PG_LOOKUP_MS + delayMs);
    void query.catch(() => undefined).finally(() => pool.release(client));
    try {
      await this.withDeadline(query, deadlineMs);
      m.dbQueries++;
    } catch (err) {
      m.dbQueries++;
      return err === DEADLINE || err instanceof QueryCanceled ? 'timeout' : 'error';
    }
    if (this.clock.now() >= deadlineMs) return 'timeout'; // outlived its request: no fill
    try {
      await this.withDeadline(redis.set(key, this.cfg.cache!.ttlMs), deadlineMs);
    } catch {
      m.cacheFillErrors++;
    }
    return 'miss';
  }

  private withDeadline<T>(p: Promise<T>, deadlineMs: number): Promise<T> {
    const leftMs = deadlineMs - this.clock.now();
    if (!Number.isFinite(leftMs)) return p;
    if (leftMs <= 0) return Promise.reject(DEADLINE);
    return new Promise<T>((resolve, reject) => {
      let done = false;
      this.proc.at(deadlineMs, () => {
        if (done) return;
        done = true;
        reject(DEADLINE);
      });
      p.then(
        (v) => {
          if (done) return;
          done = true;
          resolve(v);
        },
        (e: unknown) => {
          if (done) return;
          done = true;
          reject(e);
        },
      );
    });
  }

  // What the triggers do to it.

  pause(): void {
    this.proc.pause();
  }

  /** Runs again: what fell due meanwhile happens at once, then it reads what the kernel kept. */
  resume(): void {
    if (this.proc.state !== 'paused') return;
    this.proc.resume();
    const kept = this.backlog;
    this.backlog = [];
    this.acceptQueued = 0;
    const now = this.clock.now();
    for (const req of kept)
      this.proc.at(now, () => {
        this.live.delete(req);
        this.receive(req);
      });
  }

  /** SIGKILL (or a stop: its connections are closed just the same): queue and work in progress are lost. */
  kill(): void {
    if (this.proc.state === 'down') return;
    this.proc.kill();
    const lost = [...this.live];
    this.live.clear();
    this.backlog = [];
    this.acceptQueued = 0;
    for (const req of lost) if (!req.gone) req.reset();
    this.redisClient = undefined;
    this.dbPool = undefined;
    this.onDied?.();
  }

  start(): void {
    if (this.proc.state !== 'down') return;
    this.proc.start();
    this.boot();
  }

  /** A dependency died under the api's connections to it. */
  dependencyDied(which: 'redis' | 'postgres'): void {
    if (which === 'redis') this.redisClient?.serverDied();
    else for (const c of this.dbPool?.all ?? []) c.serverDied();
  }
}
