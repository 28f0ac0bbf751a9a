import { FifoQueue } from '../../foundation/fifoQueue.js';

/** FIFO: the one head-index queue (foundation/fifoQueue.ts). */
export { FifoQueue };

/**
 * The queue in front of the api's workers. FIFO serves the oldest request first (the
 * default, and the discipline under which a backlog of requests whose clients have
 * given up is served before anyone still waiting); LIFO serves the newest first, so
 * under overload fresh requests meet their deadline and stale ones starve. A bound
 * turns either into a bounded queue: `push` refuses when it is full.
 */
export type QueueDiscipline = 'fifo' | 'lifo';

export interface JobQueue<T> {
  readonly length: number;
  /** Adds an item; false (and the item is not queued) when the queue is full. */
  push(item: T): boolean;
  /** The next item to serve, or undefined when empty. */
  pop(): T | undefined;
}

/** LIFO: a stack. */
export class LifoQueue<T> implements JobQueue<T> {
  private readonly items: T[] = [];

  constructor(private readonly bound = Infinity) {}

  get length(): number {
    return this.items.length;
  }

  push(item: T): boolean {
    if (this.items.length >= this.bound) return false;
    this.items.push(item);
    return true;
  }

  pop(): T | undefined {
    return this.items.pop();
  }
}

export function createQueue<T>(discipline: QueueDiscipline, bound?: number): JobQueue<T> {
  if (bound !== undefined && !(bound >= 0)) throw new RangeError(`queue bound must be >= 0 (got ${bound})`);
  return discipline === 'lifo' ? new LifoQueue<T>(bound) : new FifoQueue<T>(bound);
}
