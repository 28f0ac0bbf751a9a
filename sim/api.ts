import { applyApiState, type ApiState } from '../services/api/apiState.js';
import type { DurationDist } from '../foundation/distributions.js';
import { seededRng } from '../foundation/rng.js';
import { CONNECT_TIMEOUT_MS } from '../bench/transport/http.js';
import { ReadThrough, type DbRetryPolicy, type LookupEvents } from '../services/api/lookup.js';
import { LISTEN_BACKLOG, poolOptions, type Mitigations } from '../services/api/poolOptions.js';
import type { RejectReason } from '../services/api/shedding.js';
import { WorkerPool } from '../services/api/workerPool.js';
import {
  WorkHandler,
  handlerRngs,
  type HandlerRngs,
  type ErrorCost,
  type ErrorPathKind,
  type QueuedWork,
  type WorkEvents,
  type WorkRequest,
} from '../services/api/workHandler.js';
import { runTimerFn, type SimClock, type TimerFn } from './clock.js';
import type { Alarm } from '../foundation/clock.js';
import {
  PG_LOOKUP_MS,
  SimDbPool,
  SimRedisClient,
  type SimPgConn,
  type SimPostgresServer,
  type SimRedisServer,
} from './data.js';
import { SimProcess } from './process.js';
import { KeyedRng } from './keyedRng.js';
import { LiveSet } from '../bench/liveSet.js';

/**
 * The api (services/api/server.ts) in the simulation. Its request path is the api's
 * own code, run on the simulated process's clock: the /work handler
 * (services/api/workHandler.ts) with its WorkerPool, queues and shedders, and the
 * read-through lookup (services/api/lookup.ts) over the simulated Redis and Postgres
 * clients (data.ts). What is modelled here is the process around it: its listening
 * socket as the kernel has it (see `connect`), pause, kill and restart.
 */

export interface SimApiConfig {
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  readonly mitigations?: Mitigations;
  readonly requestTimeoutMs?: number;
  readonly errorCost?: ErrorCost;
  readonly cache?: {
    readonly ttlMs: number;
    readonly pool: number;
    readonly queryDelay: DurationDist;
    /** The api's client-side query timeout and retries (services/api/lookup.ts's policy). */
    readonly retry?: DbRetryPolicy;
  };
  /**
   * Draw each request's work by its attempt (SimRequest.drawKey) from this seed's keyed
   * stream, not in service order (a lateness replay: two runs serving the same attempts
   * in different orders draw the same work). Absent: the api's shared stream, as the lab's api.
   */
  readonly keyedWorkSeed?: number;
}

/**
 * The listen backlog the api asks for (the kernel's default somaxconn of 4096 does not
 * lower it). A paused api's kernel still completes this many handshakes (and one more);
 * later SYNs are dropped and retried by the client's kernel.
 */
export const ACCEPT_BACKLOG = LISTEN_BACKLOG;
/** Linux's SYN retransmissions: 1 s, then doubling (tcp_syn_retries 6). */
export const SYN_RETRY_MS = [1000, 3000, 7000, 15000, 31000, 63000] as const;

/** The api's Prometheus counters (services/api/metrics.ts), as plain numbers. */
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
  /** api_db_attempts_total: every attempt sent, retries included. */
  dbAttempts = 0;
  readonly rejected: Partial<Record<RejectReason, number>> = {};
  /** api_queue_wait_seconds' sum (ms here) and count: the wait of every request a worker took. */
  queueWaitMsSum = 0;
  queueWaitCount = 0;
  /** api_error_path_seconds_total by kind (ms here), present once that kind has happened. */
  readonly errorPathMs: Partial<Record<ErrorPathKind, number>> = {};
}

/** The handler's and the lookup's events, counted in ApiCounters (what the series read). */
class CountedEvents implements WorkEvents, LookupEvents {
  constructor(
    private readonly m: ApiCounters,
    private readonly observeQueueWait: () => ((ms: number) => void) | undefined,
  ) {}

  received(): void {
    this.m.received++;
  }
  completed(): void {
    this.m.completed++;
  }
  rejected(reason: RejectReason): void {
    this.m.rejected[reason] = (this.m.rejected[reason] ?? 0) + 1;
  }
  timedOut(): void {
    this.m.timedOut++;
  }
  wasted(): void {
    this.m.wasted++;
  }
  queueWait(ms: number): void {
    this.m.queueWaitMsSum += ms;
    this.m.queueWaitCount++;
    this.observeQueueWait()?.(ms);
  }
  serviceTime(): void {}
  errorPath(kind: ErrorPathKind, ms: number): void {
    this.m.errorPathMs[kind] = (this.m.errorPathMs[kind] ?? 0) + ms;
  }
  cacheHit(): void {
    this.m.cacheHits++;
  }
  cacheMiss(): void {
    this.m.cacheMisses++;
  }
  cacheError(): void {
    this.m.cacheErrors++;
  }
  cacheFillError(): void {
    this.m.cacheFillErrors++;
  }
  dbPoolWait(): void {}
  dbQuery(): void {
    this.m.dbQueries++;
  }
  dbAttempt(): void {
    this.m.dbAttempts++;
  }
  dbQueryTime(): void {}
}

/** One HTTP request (one attempt) as the api sees it; the transport implements it. */
export interface SimRequest extends WorkRequest {
  /** Path without the query. */
  readonly route: string;
  answer(status: number, shed?: string): void;
  /** The connection was reset (the api died under it). */
  reset(): void;
  /** The connection was refused (the api is down). */
  refuse(): void;
  /** The client gave up connecting (its connect timeout). */
  connectTimedOut(): void;
  /** Set by the api while the request waits for a worker. */
  queued: QueuedWork | undefined;
  /** Its slot in the api's LiveSet of the requests it holds. */
  liveSlot?: number | undefined;
}

/** What the api's handler answers in place of a request whose client left while it waited: nobody. */
const GONE: SimRequest = {
  route: '/work',
  cost: undefined,
  key: undefined,
  deadlineHeaderMs: undefined,
  gone: true,
  queued: undefined,
  answer: () => undefined,
  reset: () => undefined,
  refuse: () => undefined,
  connectTimedOut: () => undefined,
};

export class SimApi {
  readonly proc: SimProcess;
  readonly counters = new ApiCounters();
  private pool!: WorkerPool;
  private handler!: WorkHandler<SimRequest>;
  private readonly events = new CountedEvents(this.counters, () => this.observeQueueWait);
  private redisClient: SimRedisClient | undefined;
  private dbPool: SimDbPool | undefined;
  /** Requests received (or waiting in the socket backlog) and not answered: what a kill resets. */
  private readonly live = new LiveSet<SimRequest>();
  /** Requests on connections the kernel holds while the api is paused, in arrival order. */
  private backlog: SimRequest[] = [];
  private acceptQueued = 0;
  /** Called when the api dies: the client's kept-alive connections to it are gone. */
  onDied: (() => void) | undefined;
  /** How many times it was started (1 for the first start). */
  starts = 0;
  /** True while one of the api's own events runs (a timer of its code): see `turn`. */
  inTurn = false;
  /** Called when one of the api's events is done (the transport delivers what it answered then). */
  onTurnEnd: (() => void) | undefined;
  /** Sees each request's queue wait when a worker takes it (validation against closed forms). */
  observeQueueWait: ((ms: number) => void) | undefined;

  constructor(
    private readonly clock: SimClock,
    private readonly cfg: SimApiConfig,
    private readonly deps?: { readonly redis: SimRedisServer; readonly postgres: SimPostgresServer },
  ) {
    this.proc = new SimProcess('api', clock, (fn) => this.turn(fn), true);
    this.boot();
  }

  /**
   * The capacity triggers' switch, as the api's /_api/state: what is wrong with `state`, or
   * undefined once applied. A restart (boot) brings the pool and work back as declared, as a
   * restarted api process would.
   */
  setState(state: ApiState): string | undefined {
    return applyApiState(state, this.handler, this.pool, this.cfg.workers);
  }

  /** A fresh process: a new pool, new connections to its dependencies, its seeded streams from the start. */
  private boot(): void {
    this.starts++;
    // The api's code runs inside the process: its timers wait while it is paused.
    const procClock = {
      now: () => this.clock.now(),
      timer: (atMs: number, fn: () => void) => this.proc.wrapped(atMs, fn, true),
      fire: (atMs: number, target: Alarm) => this.proc.wrappedAlarm(atMs, target),
    };
    this.pool = new WorkerPool(this.cfg.workers, {
      ...poolOptions(this.cfg.mitigations),
      now: procClock.now,
    });
    let cache: ReadThrough<SimPgConn> | undefined;
    const cc = this.cfg.cache;
    if (this.deps && cc) {
      const redis = (this.redisClient = new SimRedisClient(this.proc, this.deps.redis));
      redis.open();
      const db = (this.dbPool = new SimDbPool(this.proc, this.deps.postgres, cc.pool, cc.retry?.timeoutMs));
      db.open();
      cache = new ReadThrough<SimPgConn>(
        procClock,
        { get: (key) => redis.get(key), fill: (key) => redis.set(key, cc.ttlMs) },
        {
          acquire: (deadlineMs) => db.acquire(deadlineMs),
          release: (c) => db.release(c),
          discard: (c) => c.discard(),
          query: (c, _key, timeoutMs, delayMs) => c.query(timeoutMs, PG_LOOKUP_MS + delayMs).then(() => ''),
        },
        cc.queryDelay,
        seededRng(this.cfg.seed, 'api-db'),
        this.events,
        cc.retry,
      );
    }
    this.handler = new WorkHandler<SimRequest>(
      this.cfg,
      this.pool,
      procClock,
      this.rngs(),
      this.events,
      cache,
      (req, status, shed) => {
        this.live.delete(req);
        if (!req.gone) req.answer(status, shed);
      },
      GONE,
    );
  }

  /**
   * Runs one of the api's events. What it answers inside reaches the client after it,
   * as the lab's api writes the answer, frees the worker and takes the next job before
   * the client reads: the client hears at the same virtual instant, after the api.
   */
  private turn(fn: TimerFn): void {
    if (this.inTurn) return runTimerFn(fn);
    this.inTurn = true;
    try {
      runTimerFn(fn);
    } finally {
      this.inTurn = false;
      this.onTurnEnd?.();
    }
  }

  /** The handler's streams: the api's own, and the keyed one when the run draws by attempt. */
  private rngs(): HandlerRngs {
    const rngs = handlerRngs(this.cfg.seed);
    if (this.cfg.keyedWorkSeed === undefined) return rngs;
    const keyed = new KeyedRng(this.cfg.keyedWorkSeed, 'api-work-keyed');
    return { ...rngs, keyed: (key) => keyed.at(key) };
  }

  get queueDepth(): number {
    return this.proc.state === 'down' ? 0 : this.pool.queueDepth;
  }

  get busyWorkers(): number {
    return this.proc.state === 'down' ? 0 : this.pool.busyWorkers;
  }

  /** How many distinct objects the requests waiting for a worker are (abandoned ones share one). */
  get waitingObjects(): number {
    return this.proc.state === 'down' ? 0 : this.pool.waitingObjects();
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

  /** The api reads one request: /work goes to the api's handler; /health answers at once; nothing else is routed (express's 404). */
  private receive(req: SimRequest): void {
    if (req.route !== '/work') {
      this.counters.received++;
      req.answer(req.route === '/health' ? 200 : 404);
      return;
    }
    this.live.add(req);
    const queued = this.handler.handle(req);
    if (!req.gone) req.queued = queued;
    else {
      // Read from the socket after its client left (a paused api, resumed).
      this.live.delete(req);
      queued?.abandon();
    }
  }

  /**
   * The client closed the request's connection (it gave up): the api keeps only what
   * it still has to do for it. A request waiting in the queue becomes its times alone;
   * a collapsed api queues every attempt for ever, and nobody waits for most of them.
   */
  clientClosed(req: SimRequest): void {
    this.live.delete(req);
    const queued = req.queued;
    req.queued = undefined;
    queued?.abandon();
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
    const lost = this.live.drain();
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
