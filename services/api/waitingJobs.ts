import type { QueueDiscipline } from './queue.js';

/** Slots per block of a WaitingJobs: a block is 64 KB (job pointers and arrival times). */
const BLOCK = 4096;

/**
 * The jobs waiting for a worker (FIFO or LIFO, optionally bounded), in blocks of slots:
 * each job's times (arrival, request-timeout expiry, deadline; NaN for none) in typed
 * arrays, the job itself in a slot beside them. A job whose client has gone can be
 * `replace`d by a shared stand-in: then it is no object of its own, only its times and
 * a slot. A collapsed api queues every attempt for ever, still works on each one, and
 * holds a million of them, so the queue's memory follows its length, not a power of
 * two above it:
 *   - blocks are taken as the queue grows and given back as it drains (nothing is
 *     copied, and no doubled array sits beside the old one while it is);
 *   - a full block whose every slot holds the same stand-in keeps that one reference,
 *     not 4,096 (8 bytes a job saved);
 *   - a time that is each job's arrival plus the same constant (the server's request
 *     timeout) is that constant, not an array (8 bytes a job): it is stored only once
 *     some job's is not exactly that sum.
 * A backlog of stand-ins is thus 8 bytes a job (its arrival time) against 32.
 */
export class WaitingJobs<J> {
  /** The blocks from the one holding ticket `first * size` on. */
  private blocks: Block<J>[] = [];
  private first = 0;
  private readonly shift: number;
  private readonly mask: number;
  /** A drained block kept for the next one needed (a queue going to and fro across a boundary). */
  private spare: Block<J> | undefined;
  private readonly timeoutAt: TimeColumn;
  private readonly deadline: TimeColumn;
  /** Ticket (absolute position) of the oldest waiting job, and one past the newest. */
  private head = 0;
  private tail = 0;
  /** The times of the job `pop` returned last. */
  poppedEnqueuedMs = 0;
  poppedTimeoutAtMs = NaN;
  poppedDeadlineMs = NaN;

  /** `blockSize`: slots per block (a power of two; small ones for tests). */
  constructor(
    private readonly discipline: QueueDiscipline = 'fifo',
    private readonly bound = Infinity,
    blockSize = BLOCK,
  ) {
    if (!(bound >= 0)) throw new RangeError(`queue bound must be >= 0 (got ${bound})`);
    this.shift = Math.ceil(Math.log2(Math.max(2, blockSize)));
    this.mask = 2 ** this.shift - 1;
    this.timeoutAt = new TimeColumn(this.mask + 1);
    this.deadline = new TimeColumn(this.mask + 1);
  }

  get length(): number {
    return this.tail - this.head;
  }

  /** Queues `job` with its times; its ticket (for `replace` while it waits), or -1 when the queue is full. */
  push(job: J, enqueuedMs: number, timeoutAtMs: number, deadlineMs: number): number {
    if (this.length >= this.bound) return -1;
    const t = this.tail++;
    const i = t & this.mask;
    const b = (t >>> this.shift) - this.first;
    const block = b < this.blocks.length ? this.blocks[b]! : this.newBlock();
    if (block.jobs === undefined) block.unshare(); // a LIFO back in a block of stand-ins
    const jobs = block.jobs!;
    if (block.sharedSlots !== 0 && jobs[i] === block.shared) block.sharedSlots--;
    jobs[i] = job;
    if (job === block.shared) block.sharedSlots++;
    block.enq[i] = enqueuedMs;
    this.timeoutAt.set(this.blocks, b, i, enqueuedMs, timeoutAtMs, this.length - 1);
    this.deadline.set(this.blocks, b, i, enqueuedMs, deadlineMs, this.length - 1);
    return t;
  }

  /** The next job to serve (its times in `popped…`), or undefined when empty. */
  pop(): J | undefined {
    if (this.tail === this.head) return undefined;
    const lifo = this.discipline === 'lifo';
    const t = lifo ? --this.tail : this.head++;
    const i = t & this.mask;
    const b = (t >>> this.shift) - this.first;
    const block = this.blocks[b]!;
    const enq = block.enq[i]!;
    this.poppedEnqueuedMs = enq;
    this.poppedTimeoutAtMs = this.timeoutAt.get(b, i, enq);
    this.poppedDeadlineMs = this.deadline.get(b, i, enq);
    let job: J | undefined;
    if (block.jobs === undefined) job = block.shared;
    else {
      job = block.jobs[i];
      block.jobs[i] = undefined;
      if (job === block.shared) block.sharedSlots--;
    }
    if (lifo) {
      // The block past the newest job is given back (not the newest's: a queue that
      // comes and goes at a boundary would take and give back a block each time).
      if (i === 0 && b + 1 < this.blocks.length) this.dropLast();
    } else if (i === this.mask) this.dropFirst();
    return job;
  }

  /**
   * Puts `job` in the place of the one queued with `ticket`, keeping its times. The
   * ticket must be of a job still waiting (a LIFO reuses the tickets of jobs taken).
   */
  replace(ticket: number, job: J): void {
    if (!(ticket >= this.head && ticket < this.tail))
      throw new RangeError(`no waiting job has ticket ${ticket}`);
    const block = this.blocks[(ticket >>> this.shift) - this.first]!;
    if (block.jobs === undefined) {
      if (job === block.shared) return;
      block.unshare();
    }
    const jobs = block.jobs!;
    const i = ticket & this.mask;
    if (block.sharedSlots === 0) block.shared = job;
    else if (jobs[i] === block.shared) block.sharedSlots--;
    jobs[i] = job;
    if (job === block.shared && ++block.sharedSlots === jobs.length) block.jobs = undefined;
  }

  /** How many distinct objects the waiting jobs are (what a backlog of stand-ins saves). */
  distinctJobs(): number {
    const seen = new Set<J>();
    for (let t = this.head; t < this.tail; t++) {
      const block = this.blocks[(t >>> this.shift) - this.first]!;
      seen.add(block.jobs === undefined ? block.shared! : block.jobs[t & this.mask]!);
    }
    return seen.size;
  }

  /** The block for the slots past the last one (the spare, if any). */
  private newBlock(): Block<J> {
    const block = this.spare ?? new Block<J>(this.mask + 1);
    this.spare = undefined;
    this.blocks.push(block);
    this.timeoutAt.grew(block.enq);
    this.deadline.grew(block.enq);
    return block;
  }

  /** The oldest block is drained (a FIFO's head left it). */
  private dropFirst(): void {
    this.keep(this.blocks.shift()!);
    this.timeoutAt.dropFirst();
    this.deadline.dropFirst();
    this.first++;
  }

  /** The newest block is empty (a LIFO's tail left it). */
  private dropLast(): void {
    this.keep(this.blocks.pop()!);
    this.timeoutAt.dropLast();
    this.deadline.dropLast();
  }

  private keep(block: Block<J>): void {
    if (block.jobs === undefined) block.unshare();
    block.jobs!.fill(undefined);
    block.shared = undefined;
    block.sharedSlots = 0;
    this.spare = block;
  }
}

/** A block's slots: the jobs (absent: all `shared`) and their arrival times. */
class Block<J> {
  jobs: (J | undefined)[] | undefined;
  readonly enq: Float64Array;
  /** The stand-in some slots hold (the first put in by `replace`), and how many do. */
  shared: J | undefined;
  sharedSlots = 0;

  constructor(size: number) {
    this.jobs = new Array<J | undefined>(size).fill(undefined);
    this.enq = new Float64Array(size);
  }

  /** Every slot its own again, each holding the shared job. */
  unshare(): void {
    this.jobs = new Array<J | undefined>(this.enq.length).fill(this.shared);
  }
}

/**
 * One of the waiting jobs' times (timeout expiry, deadline), in one of three forms: all
 * NaN (none yet); every one the job's arrival plus `offset`, to the bit; or an array a
 * block, NaN where none.
 */
class TimeColumn {
  private form: 'none' | 'offset' | 'arrays' = 'none';
  private offset = 0;
  /** In the 'arrays' form, one per block (beside WaitingJobs' blocks). */
  private arrays: Float64Array[] = [];

  constructor(private readonly size: number) {}

  /** Records the time `v` of the job in slot `i` of block `b`; `waiting`: how many jobs waited before it. */
  set(
    blocks: readonly Block<unknown>[],
    b: number,
    i: number,
    enq: number,
    v: number,
    waiting: number,
  ): void {
    if (this.form === 'arrays') {
      this.arrays[b]![i] = v;
      return;
    }
    if (this.form === 'offset' ? enq + this.offset === v : Number.isNaN(v)) return;
    if (waiting === 0) {
      // No other job waits: the form can start again from this one.
      if (Number.isNaN(v)) this.form = 'none';
      if (Number.isNaN(v) || this.tryOffset(enq, v)) return;
    }
    this.toArrays(blocks);
    this.arrays[b]![i] = v;
  }

  get(b: number, i: number, enq: number): number {
    return this.form === 'none' ? NaN : this.form === 'offset' ? enq + this.offset : this.arrays[b]![i]!;
  }

  /** A block was added (with its arrival times `enq`). */
  grew(enq: Float64Array): void {
    if (this.form === 'arrays') this.arrays.push(new Float64Array(enq.length).fill(NaN));
  }

  dropFirst(): void {
    if (this.form === 'arrays') this.arrays.shift();
  }

  dropLast(): void {
    if (this.form === 'arrays') this.arrays.pop();
  }

  /**
   * The first time of a queue that holds no other: the offset it is from its arrival,
   * if adding it back gives the time exactly. A round figure first (the configured
   * timeout, which the difference may miss by a rounding), then the difference itself.
   */
  private tryOffset(enq: number, v: number): boolean {
    const d = v - enq;
    for (const offset of [Math.round(d * 1e6) / 1e6, d]) {
      if (Number.isFinite(offset) && enq + offset === v) {
        this.form = 'offset';
        this.offset = offset;
        return true;
      }
    }
    return false;
  }

  /** From now on an array a block: the times so far written out (all slots, waiting or not). */
  private toArrays(blocks: readonly Block<unknown>[]): void {
    const offset = this.form === 'offset' ? this.offset : NaN;
    this.arrays = blocks.map((block) => {
      const a = new Float64Array(this.size);
      for (let i = 0; i < a.length; i++) a[i] = block.enq[i]! + offset;
      return a;
    });
    this.form = 'arrays';
  }
}
