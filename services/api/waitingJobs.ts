import type { QueueDiscipline } from './queue.js';

/**
 * The jobs waiting for a worker (FIFO or LIFO, optionally bounded), in a ring: each
 * job's times (arrival, request-timeout expiry, deadline; NaN for none) in typed
 * arrays, the job itself in a slot beside them. A job whose client has gone can be
 * `replace`d by a shared stand-in: then it is no object of its own, only its times and
 * a slot (16 bytes; 32 once some job has a timeout or a deadline: those arrays are
 * made when first needed). A collapsed api queues every attempt for ever, still
 * works on each one, and holds hundreds of thousands of them.
 */
export class WaitingJobs<J> {
  private jobs: (J | undefined)[];
  private enq: Float64Array;
  private timeoutAt: Float64Array | undefined;
  private deadline: Float64Array | undefined;
  private mask: number;
  /** Ticket (absolute position) of the oldest waiting job, and one past the newest. */
  private head = 0;
  private tail = 0;
  /** The times of the job `pop` returned last. */
  poppedEnqueuedMs = 0;
  poppedTimeoutAtMs = NaN;
  poppedDeadlineMs = NaN;

  constructor(
    private readonly discipline: QueueDiscipline = 'fifo',
    private readonly bound = Infinity,
    capacity = 64,
  ) {
    if (!(bound >= 0)) throw new RangeError(`queue bound must be >= 0 (got ${bound})`);
    const cap = 2 ** Math.ceil(Math.log2(Math.max(2, capacity)));
    this.jobs = new Array<J | undefined>(cap).fill(undefined);
    this.enq = new Float64Array(cap);
    this.mask = cap - 1;
  }

  get length(): number {
    return this.tail - this.head;
  }

  /** Queues `job` with its times; its ticket (for `replace` while it waits), or -1 when the queue is full. */
  push(job: J, enqueuedMs: number, timeoutAtMs: number, deadlineMs: number): number {
    if (this.length >= this.bound) return -1;
    if (this.length === this.jobs.length) this.grow();
    const t = this.tail++;
    const i = t & this.mask;
    this.jobs[i] = job;
    this.enq[i] = enqueuedMs;
    if (this.timeoutAt || !Number.isNaN(timeoutAtMs)) (this.timeoutAt ??= this.nans())[i] = timeoutAtMs;
    if (this.deadline || !Number.isNaN(deadlineMs)) (this.deadline ??= this.nans())[i] = deadlineMs;
    return t;
  }

  /** The next job to serve (its times in `popped…`), or undefined when empty. */
  pop(): J | undefined {
    if (this.tail === this.head) return undefined;
    const t = this.discipline === 'lifo' ? --this.tail : this.head++;
    const i = t & this.mask;
    const job = this.jobs[i];
    this.jobs[i] = undefined;
    this.poppedEnqueuedMs = this.enq[i]!;
    this.poppedTimeoutAtMs = this.timeoutAt ? this.timeoutAt[i]! : NaN;
    this.poppedDeadlineMs = this.deadline ? this.deadline[i]! : NaN;
    return job;
  }

  /**
   * Puts `job` in the place of the one queued with `ticket`, keeping its times. The
   * ticket must be of a job still waiting (a LIFO reuses the tickets of jobs taken).
   */
  replace(ticket: number, job: J): void {
    if (!(ticket >= this.head && ticket < this.tail))
      throw new RangeError(`no waiting job has ticket ${ticket}`);
    this.jobs[ticket & this.mask] = job;
  }

  /** How many distinct objects the waiting jobs are (what a backlog of stand-ins saves). */
  distinctJobs(): number {
    const seen = new Set<J>();
    for (let t = this.head; t < this.tail; t++) seen.add(this.jobs[t & this.mask]!);
    return seen.size;
  }

  /** A times array of the current capacity, all NaN (none). */
  private nans(): Float64Array {
    return new Float64Array(this.jobs.length).fill(NaN);
  }

  private grow(): void {
    const cap = this.jobs.length * 2;
    const mask = cap - 1;
    const jobs = new Array<J | undefined>(cap).fill(undefined);
    const enq = new Float64Array(cap);
    const timeoutAt = this.timeoutAt && new Float64Array(cap).fill(NaN);
    const deadline = this.deadline && new Float64Array(cap).fill(NaN);
    for (let t = this.head; t < this.tail; t++) {
      const from = t & this.mask;
      const to = t & mask;
      jobs[to] = this.jobs[from];
      enq[to] = this.enq[from]!;
      if (timeoutAt) timeoutAt[to] = this.timeoutAt![from]!;
      if (deadline) deadline[to] = this.deadline![from]!;
    }
    this.jobs = jobs;
    this.enq = enq;
    this.timeoutAt = timeoutAt;
    this.deadline = deadline;
    this.mask = mask;
  }
}
