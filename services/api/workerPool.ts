import type { QueueDiscipline } from './queue.js';
import type { PickupShedder, RejectReason } from './shedding.js';
import { WaitingJobs } from './waitingJobs.js';

/**
 * A fixed pool of `c` workers with a queue in front: the service whose capacity is
 * c / mean service time. A job holds a worker for as long as its work takes, whether
 * or not its client is still waiting (wasted work is the sustaining effect under
 * study), unless a mitigation is switched on:
 *   - a bounded queue rejects on arrival when full (queue_full);
 *   - a concurrency limit rejects on arrival when that many are queued or running (concurrency);
 *   - deadline-aware dropping rejects at pickup a job whose propagated deadline passed (deadline);
 *   - a shedder (queue-time limit, CoDel) rejects at pickup by queueing delay.
 * A rejected job never runs its work. Its worker moves on to the next one at once,
 * unless the job's reject answers a WorkEnd: an expensive error path (lab.api.errorCost)
 * that holds the worker until it settles.
 */
/**
 * The end of a job's work: the pool only calls `then(free, free)` on it, so a promise
 * will do, or a lighter thenable (the simulated api's, which settles without a microtask).
 */
export interface WorkEnd {
  then(onDone: () => void, onFailed: () => void): unknown;
}

export interface Job {
  /** When the job entered the queue (ms on the pool's clock). */
  readonly enqueuedMs: number;
  /** When the job's result stops being useful (ms on the pool's clock); undefined: never. */
  readonly deadlineMs?: number | undefined;
  /** The server-side request timeout's expiry (ms on the pool's clock); a job picked up after it is rejected with timeout. */
  readonly timeoutAtMs?: number | undefined;
  /** Does the job's work; settles when the worker is free again. */
  run(queueWaitMs: number): WorkEnd;
  /**
   * The job was refused without doing its work. At pickup a worker holds it: a WorkEnd
   * returned keeps that worker busy until it settles (the error path's own work). On
   * arrival (queue_full, concurrency) no worker has it, and what is returned is ignored.
   */
  reject(reason: RejectReason, queueWaitMs: number): WorkEnd | void;
}

export interface WorkerPoolOptions {
  readonly queue?: QueueDiscipline;
  /** Most jobs waiting; more are rejected with queue_full. */
  readonly queueBound?: number;
  /** Most jobs admitted (waiting + running); more are rejected with concurrency. */
  readonly concurrencyLimit?: number;
  /** Drop, at pickup, jobs whose deadline has passed. */
  readonly deadlineDrop?: boolean;
  readonly shedder?: PickupShedder & { onIdle?(): void };
  /** The clock (ms); performance.now by default, injectable for tests. */
  readonly now?: () => number;
}

export class WorkerPool {
  private busy = 0;
  private readonly queue: WaitingJobs<Job>;
  private readonly now: () => number;

  private size: number;

  constructor(
    workers: number,
    private readonly opts: WorkerPoolOptions = {},
  ) {
    if (!(workers >= 1)) throw new RangeError(`workers must be >= 1 (got ${workers})`);
    this.size = workers;
    if (opts.concurrencyLimit !== undefined && !(opts.concurrencyLimit >= 1))
      throw new RangeError(`concurrency limit must be >= 1 (got ${opts.concurrencyLimit})`);
    this.queue = new WaitingJobs<Job>(opts.queue ?? 'fifo', opts.queueBound);
    this.now = opts.now ?? (() => performance.now());
  }

  /** Workers in the pool now (the `workers` trigger changes it for its window). */
  get workers(): number {
    return this.size;
  }

  /**
   * Changes the pool to `n` workers. Shrinking takes no job from a busy worker: the pool
   * is down to `n` once that many finish. Growing puts the new workers on waiting jobs.
   */
  resize(n: number): void {
    if (!(Number.isInteger(n) && n >= 1))
      throw new RangeError(`workers must be a whole number >= 1 (got ${n})`);
    this.size = n;
    while (this.busy < this.size) {
      const next = this.dequeue();
      if (!next) return;
      const q = this.queue;
      this.pickup(next, q.poppedEnqueuedMs, q.poppedTimeoutAtMs, q.poppedDeadlineMs);
    }
  }

  get busyWorkers(): number {
    return this.busy;
  }

  get queueDepth(): number {
    return this.queue.length;
  }

  /**
   * Takes `job`: a free worker starts it, or it waits in the queue, or it is refused.
   * Returns its ticket while it waits (for `abandon`), else undefined.
   */
  submit(job: Job): number | undefined {
    const limit = this.opts.concurrencyLimit;
    if (limit !== undefined && this.busy + this.queue.length >= limit) {
      job.reject('concurrency', 0);
      return undefined;
    }
    const timeoutAtMs = job.timeoutAtMs ?? NaN;
    const deadlineMs = job.deadlineMs ?? NaN;
    if (this.busy < this.size) {
      this.pickup(job, job.enqueuedMs, timeoutAtMs, deadlineMs);
      return undefined;
    }
    const ticket = this.queue.push(job, job.enqueuedMs, timeoutAtMs, deadlineMs);
    if (ticket >= 0) return ticket;
    job.reject('queue_full', 0);
    return undefined;
  }

  /**
   * The job waiting with `ticket` is to be served as `standIn` (its client has gone, so
   * a shared object will do): its place, times and work stay as they were. The ticket
   * must be of a job still waiting, one neither run nor rejected yet.
   */
  abandon(ticket: number, standIn: Job): void {
    this.queue.replace(ticket, standIn);
  }

  /** How many distinct objects the waiting jobs are. */
  waitingObjects(): number {
    return this.queue.distinctJobs();
  }

  /**
   * A free worker takes `first` (with its times; NaN: no timeout, no deadline), unless
   * a pickup rule drops it; then it takes the next one.
   */
  private pickup(first: Job, enqueuedMs: number, timeoutAtMs: number, deadlineMs: number): void {
    let job: Job | undefined = first;
    while (job) {
      const now = this.now();
      const waitMs = now - enqueuedMs;
      const reason =
        now >= timeoutAtMs
          ? 'timeout'
          : this.opts.deadlineDrop && now >= deadlineMs
            ? 'deadline'
            : this.opts.shedder?.onPickup(waitMs, now);
      if (reason === undefined) {
        this.start(job, waitMs);
        return;
      }
      const errorPath = job.reject(reason, waitMs);
      if (errorPath) {
        this.busy++;
        this.freeWhen(errorPath);
        return;
      }
      job = this.dequeue();
      enqueuedMs = this.queue.poppedEnqueuedMs;
      timeoutAtMs = this.queue.poppedTimeoutAtMs;
      deadlineMs = this.queue.poppedDeadlineMs;
    }
  }

  private start(job: Job, waitMs: number): void {
    this.busy++;
    let ran: WorkEnd;
    try {
      ran = job.run(waitMs);
    } catch (err) {
      ran = Promise.reject(err as Error);
    }
    this.freeWhen(ran);
  }

  /** A busy worker is free again when `ran` settles, and takes the next job. */
  private freeWhen(ran: WorkEnd): void {
    // A job's failure is its own to report; the worker goes on either way. (One then with
    // both handlers, and one function for every job: the simulator runs millions of jobs,
    // and every promise and closure counts.)
    ran.then(this.free, this.free);
  }

  /** A worker is free: it takes the next job, unless the pool was shrunk below it. */
  private readonly free = (): void => {
    this.busy--;
    if (this.busy >= this.size) return; // the pool was shrunk: this worker goes
    const next = this.dequeue();
    const q = this.queue;
    if (next) this.pickup(next, q.poppedEnqueuedMs, q.poppedTimeoutAtMs, q.poppedDeadlineMs);
  };

  private dequeue(): Job | undefined {
    const job = this.queue.pop();
    if (job === undefined) this.opts.shedder?.onIdle?.();
    return job;
  }
}
