/**
 * A fixed pool of `c` workers with an unbounded FIFO queue in front: the service
 * whose capacity is c / mean service time. A job holds a worker for as long as its
 * work takes, whether or not its client is still waiting (wasted work is the
 * sustaining effect under study).
 */
export interface Job {
  /** When the job entered the queue (performance.now() ms). */
  readonly enqueuedMs: number;
  /** Does the job's work; resolves when the worker is free again. */
  run(queueWaitMs: number): Promise<void>;
}

export class WorkerPool {
  private busy = 0;
  // Array + head index: O(1) dequeue without shift()'s copying.
  private queue: (Job | undefined)[] = [];
  private head = 0;

  constructor(readonly workers: number) {
    if (!(workers >= 1)) throw new RangeError(`workers must be >= 1 (got ${workers})`);
  }

  get busyWorkers(): number {
    return this.busy;
  }

  get queueDepth(): number {
    return this.queue.length - this.head;
  }

  submit(job: Job): void {
    if (this.busy < this.workers) this.start(job);
    else this.queue.push(job);
  }

  private start(job: Job): void {
    this.busy++;
    const wait = performance.now() - job.enqueuedMs;
    job.run(wait).finally(() => {
      this.busy--;
      const next = this.dequeue();
      if (next) this.start(next);
    });
  }

  private dequeue(): Job | undefined {
    if (this.head >= this.queue.length) return undefined;
    const job = this.queue[this.head];
    this.queue[this.head++] = undefined;
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    return job;
  }
}
