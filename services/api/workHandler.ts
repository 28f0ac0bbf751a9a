import { sampleDuration, type DurationDist } from '../../foundation/distributions.js';
import { seededRng, type Rng } from '../../foundation/rng.js';
import type { Alarm } from '../../foundation/clock.js';
import type { ApiClock, Lookup } from './lookup.js';
import { requestLimits } from './requestLimits.js';
import type { RejectReason } from './shedding.js';
import type { Job, WorkEnd, WorkerPool } from './workerPool.js';

/**
 * What the api does with one GET /work, written once for the express server
 * (server.ts) and the simulated api (sim/api.ts): the cost class, the queue (the
 * WorkerPool and its mitigations), the request timeout (checked at pickup and through
 * the lookup, never during the work itself), the read-through lookup, the work slept,
 * and the work done for clients that already left (counted as wasted). The caller
 * parses the request and writes the answer; time comes from its clock.
 */

/** One /work request as the handler sees it (parsed by the caller). */
export interface WorkRequest {
  /** ?cost= */
  readonly cost: string | undefined;
  /** ?key= (a validated whole number) */
  readonly key: number | undefined;
  /** x-deadline-ms: the client's remaining deadline at send time, when it sent one. */
  readonly deadlineHeaderMs: number | undefined;
  /** The client has gone (its socket destroyed): nobody reads an answer. */
  readonly gone: boolean;
  /** The simulator's key of this attempt (HandlerRngs.keyed): its work is drawn by it, not in service order. */
  readonly drawKey?: number | undefined;
}

/** Where the handler's events are counted (prom-client in the api, plain numbers in the simulator). */
export interface WorkEvents {
  received(): void;
  completed(status: number): void;
  rejected(reason: RejectReason): void;
  timedOut(): void;
  wasted(): void;
  queueWait(ms: number): void;
  serviceTime(ms: number): void;
  /** A worker spent `ms` on the error path of a request that ended as `kind`. */
  errorPath(kind: ErrorPathKind, ms: number): void;
}

/**
 * How a request that cost its worker an error path ended: its own request timeout
 * (504), a dependency failure (500), a deadline drop (503 deadline), a shed at pickup
 * (503 queue_time or codel, only with `onShed`).
 */
export type ErrorPathKind = 'timeout' | 'dependency' | 'deadline' | 'shed';

/**
 * The expensive error path (DESIGN.md §4): extra work a worker spends on a request that
 * ends in an error (building the error, logging it, rolling back) before it answers
 * and takes the next request. More errors leave less capacity, which makes more errors.
 */
export interface ErrorCost {
  readonly work: DurationDist;
  /**
   * Also charge a shed at pickup (queue_time, codel). Off by default: shedding is meant
   * to be the cheap path. A refusal on arrival (queue_full, concurrency) never reaches a
   * worker and costs nothing either way.
   */
  readonly onShed?: boolean | undefined;
}

/** The handler's random streams: the work's, and the error cost's apart (so declaring one leaves the work's draws as they were). */
export interface HandlerRngs {
  readonly work: Rng;
  readonly errorCost: Rng;
  /** The work's stream restarted for a request's drawKey (the simulator's lateness replay); absent: `work` in service order. */
  readonly keyed?: ((key: number) => Rng) | undefined;
}

/** The api's streams for a seed (the express api and the simulated api alike). */
export function handlerRngs(seed: number): HandlerRngs {
  return { work: seededRng(seed, 'api-work'), errorCost: seededRng(seed, 'api-error-cost') };
}

export interface WorkHandlerConfig {
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>> | undefined;
  /** Server-side request timeout (ms from arrival, queue wait included); absent: none. */
  readonly requestTimeoutMs?: number | undefined;
  /** Extra work on a request that ends in an error; absent: errors cost nothing beyond what led to them. */
  readonly errorCost?: ErrorCost | undefined;
}

/**
 * How the request ended, for the caller to write: 200 ok (`wasted` when its client had
 * gone), 400 unknown cost class, 500 database error, 503 shed (`shed` says why), 504
 * server timeout. An error with an error cost is written when its error path is done.
 */
export type Respond<R> = (req: R, status: number, shed?: RejectReason) => void;

/**
 * The handler's clock: an ApiClock, and optionally `fire`, a timer never cancelled that
 * calls `target.onAlarm()`: no canceller and no closure made (the simulator's: two objects
 * less an attempt).
 */
export type HandlerClock = ApiClock & { readonly fire?: (atMs: number, target: Alarm) => void };

/** A request waiting in the queue, as `handle` returns it: its client left (`abandon`). */
export interface QueuedWork {
  /**
   * Its client has gone: from now on the queue holds the request as its times alone,
   * and the worker that takes it answers `goneStandIn` instead (nobody reads it). The
   * work, the draws and the counters are the same. A no-op once a worker took it.
   */
  abandon(): void;
}

export class WorkHandler<R extends WorkRequest> {
  /** The shared jobs that stand in for abandoned requests, by their work. */
  private readonly standIns = new Map<DurationDist, Job>();
  private lastWork: DurationDist | undefined;
  private lastStandIn: Job | undefined;
  /**
   * Work time multiplied by this (the `slowdown` trigger's run-time switch; 1 outside it).
   * Drawn work is scaled after its draw, so the draws themselves stay as they were.
   */
  workFactor = 1;

  constructor(
    private readonly cfg: WorkHandlerConfig,
    private readonly pool: WorkerPool,
    private readonly clock: HandlerClock,
    private readonly rngs: HandlerRngs,
    private readonly events: WorkEvents,
    /** The read-through cache; absent: ?key= is not looked up. */
    private readonly cache: { lookup(key: number, deadlineMs: number): Promise<Lookup> } | undefined,
    private readonly respond: Respond<R>,
    /** A request whose client has gone (`gone` true), answered in place of abandoned ones; absent: none is abandoned. */
    private readonly goneStandIn?: R,
  ) {}

  /** Takes one request; while it waits in the queue, returns what lets its client leave. */
  handle(req: R): QueuedWork | undefined {
    this.events.received();
    const work = req.cost === undefined ? this.cfg.work : this.cfg.costs?.[req.cost];
    if (!work) {
      this.events.completed(400);
      this.respond(req, 400);
      return undefined;
    }
    const arrivedMs = this.clock.now();
    const limits = requestLimits(arrivedMs, this.cfg.requestTimeoutMs, req.deadlineHeaderMs);
    const job = new WorkJob(this, req, work, arrivedMs, limits.timeoutAtMs, limits.deadlineMs);
    const ticket = this.pool.submit(job);
    if (ticket === undefined) return undefined;
    job.ticket = ticket;
    return job;
  }

  /**
   * The job waiting with `ticket` lost its client: a shared stand-in takes its place.
   * Only a request without a lookup (whose key the queue would otherwise have to keep).
   */
  abandon(ticket: number, req: R, work: DurationDist): void {
    const gone = this.goneStandIn;
    if (!gone || (this.cache && req.key !== undefined)) return;
    if (req.drawKey !== undefined && this.rngs.keyed) {
      // Keyed draws: the stand-in keeps the request's key (one small object, not the request).
      const keyed: R = { ...gone, drawKey: req.drawKey };
      this.pool.abandon(ticket, new WorkJob(this, keyed, work, 0, undefined, undefined));
      return;
    }
    // The last one found first: most runs have one work (a collapsed api abandons millions).
    let standIn = work === this.lastWork ? this.lastStandIn : this.standIns.get(work);
    if (!standIn) this.standIns.set(work, (standIn = new WorkJob(this, gone, work, 0, undefined, undefined)));
    this.lastWork = work;
    this.lastStandIn = standIn;
    this.pool.abandon(ticket, standIn);
  }

  /** The pool refused the job without running it; at pickup its worker may owe the error path. */
  rejected(req: R, reason: RejectReason): WorkEnd | undefined {
    if (reason === 'timeout') return this.errorPath('timeout', () => this.timedOut(req));
    const answer = (): void => {
      this.events.rejected(reason);
      this.events.completed(503);
      this.respond(req, 503, reason);
    };
    if (reason === 'deadline') return this.errorPath('deadline', answer);
    if ((reason === 'queue_time' || reason === 'codel') && this.cfg.errorCost?.onShed)
      return this.errorPath('shed', answer);
    answer();
    return undefined;
  }

  /**
   * The error path of a request ending as `kind`: with an error cost its worker spends
   * a drawn extra time, then `answer`s; the WorkEnd settles when the worker is free.
   * Without one, it answers at once (undefined: nothing holds the worker).
   */
  private errorPath(kind: ErrorPathKind, answer: () => void): WorkEnd | undefined {
    const cost = this.cfg.errorCost;
    if (!cost) {
      answer();
      return undefined;
    }
    const ms = sampleDuration(cost.work, this.rngs.errorCost);
    const done = new WorkDone();
    this.clock.timer(this.clock.now() + ms, () => {
      try {
        this.events.errorPath(kind, ms);
        answer();
      } finally {
        done.settle(); // the worker is free even if writing the answer threw
      }
    });
    return done;
  }

  /** A worker took the job. */
  started(req: R, work: DurationDist, timeoutAtMs: number, queueWaitMs: number): WorkEnd {
    this.events.queueWait(queueWaitMs);
    const t0 = this.clock.now();
    if (!(this.cache && req.key !== undefined)) {
      // Without a cache lookup the handler is only the work. Its worker is freed right
      // after the answer, at the same instant and before anything the answer sets off
      // at the client: a settled-at-once thenable instead of a promise, so no microtask
      // comes between (in the simulator the client is the same process).
      const done = new WorkedAt(this, req, t0);
      const at = t0 + sampleDuration(work, this.workRng(req)) * this.workFactor;
      if (this.clock.fire) this.clock.fire(at, done);
      else this.clock.timer(at, () => done.onAlarm());
      return done;
    }
    return this.runWithLookup(req, work, timeoutAtMs, t0);
  }

  private async runWithLookup(req: R, work: DurationDist, timeoutAtMs: number, t0: number): Promise<void> {
    const got = await this.cache!.lookup(req.key!, timeoutAtMs);
    // The worker is held through the error path: the pool frees it when this settles.
    if (got === 'timeout') {
      await this.errorPath('timeout', () => this.timedOut(req));
      return;
    }
    if (got === 'error') {
      await this.errorPath('dependency', () => {
        this.events.completed(500);
        this.respond(req, 500);
      });
      return;
    }
    const ms = sampleDuration(work, this.workRng(req)) * this.workFactor;
    await new Promise<void>((resolve) => this.clock.timer(this.clock.now() + ms, resolve));
    this.worked(req, t0);
  }

  /** Where `req`'s work is drawn from: its key's stream, or the shared one in service order. */
  private workRng(req: R): Rng {
    const k = this.rngs.keyed;
    return k && req.drawKey !== undefined ? k(req.drawKey) : this.rngs.work;
  }

  /** The work of `req`, started at `t0`, is done: answer it. */
  worked(req: R, t0: number): void {
    this.events.serviceTime(this.clock.now() - t0);
    this.events.completed(200);
    // The work is done even when nobody is waiting for it any more.
    if (req.gone) this.events.wasted();
    this.respond(req, 200);
  }

  private timedOut(req: R): void {
    this.events.timedOut();
    this.events.completed(504);
    this.respond(req, 504);
  }
}

/**
 * One request as the WorkerPool's job: queued at its arrival, with its limits
 * (requestLimits.ts: the request timeout's expiry and the propagated deadline). A class rather than closures: a
 * collapsed simulated api queues hundreds of thousands of them.
 */
class WorkJob<R extends WorkRequest> implements Job, QueuedWork {
  /** Its place in the pool's queue while it waits; -1 once a worker took it (or it never waited). */
  ticket = -1;

  constructor(
    private readonly h: WorkHandler<R>,
    private readonly req: R,
    private readonly work: DurationDist,
    readonly enqueuedMs: number,
    readonly timeoutAtMs: number | undefined,
    readonly deadlineMs: number | undefined,
  ) {}

  abandon(): void {
    if (this.ticket >= 0) this.h.abandon(this.ticket, this.req, this.work);
    this.ticket = -1;
  }

  run(queueWaitMs: number): WorkEnd {
    this.ticket = -1;
    return this.h.started(this.req, this.work, this.timeoutAtMs ?? Infinity, queueWaitMs);
  }

  reject(reason: RejectReason): WorkEnd | undefined {
    this.ticket = -1;
    return this.h.rejected(this.req, reason);
  }
}

/**
 * The end of a job's work as WorkerPool sees it (it only calls `then(free, free)` on
 * what `run` returns): the callbacks run synchronously when the work is done.
 */
class WorkDone implements WorkEnd {
  /** The one waiter (the pool's), without an array; any further ones in `more`. */
  private cb: (() => void) | undefined;
  private more: (() => void)[] | undefined;
  private settled = false;

  then(onDone: () => void): void {
    if (this.settled) onDone();
    else if (this.cb === undefined) this.cb = onDone;
    else (this.more ??= []).push(onDone);
  }

  settle(): void {
    this.settled = true;
    const cb = this.cb;
    const more = this.more;
    this.cb = undefined;
    this.more = undefined;
    if (cb) cb();
    if (more) for (const f of more) f();
  }
}

/** The work of a request without a lookup: its timer answers it, then frees its worker. */
class WorkedAt<R extends WorkRequest> extends WorkDone implements Alarm {
  constructor(
    private readonly h: WorkHandler<R>,
    private readonly req: R,
    private readonly t0: number,
  ) {
    super();
  }

  onAlarm(): void {
    try {
      this.h.worked(this.req, this.t0);
    } finally {
      this.settle(); // the worker is free even if writing the answer threw
    }
  }
}
