import type { ApiClock } from './lookup.js';
import { FifoQueue } from '../../foundation/fifoQueue.js';

interface Waiter<C> {
  resolve(c: C | undefined): void;
  cancel: (() => void) | undefined;
  done: boolean;
}

/**
 * The waiting side of a fixed pool of connections, shared by the api's DbPool and the
 * simulated api's: idle connections (the last one given back is reused first) and a
 * FIFO of waiters, each with its request's deadline. A waiter whose deadline passes
 * leaves the queue with nothing (the request is abandoned; no query runs for it).
 * Opening, breaking and replacing connections is the owner's business.
 */
export class ConnectionPool<C> {
  private readonly idle: C[] = [];
  /** A waiter whose deadline passed stays queued as a no-op (O(1)) until its turn. */
  private readonly waiters = new FifoQueue<Waiter<C>>();
  private live = 0;
  private busyCount = 0;

  constructor(private readonly clock: ApiClock) {}

  /** Requests waiting for a connection. */
  get waiting(): number {
    return this.live;
  }

  /** Connections handed out and not given back. */
  get busy(): number {
    return this.busyCount;
  }

  /** A connection, or undefined when `deadlineMs` (on the clock; Infinity: none) passes first. */
  acquire(deadlineMs: number): Promise<C | undefined> {
    const c = this.idle.pop();
    if (c !== undefined) {
      this.busyCount++;
      return Promise.resolve(c);
    }
    return new Promise((resolve) => {
      const w: Waiter<C> = { resolve, cancel: undefined, done: false };
      const leftMs = deadlineMs - this.clock.now();
      if (Number.isFinite(leftMs)) {
        if (leftMs <= 0) return resolve(undefined);
        w.cancel = this.clock.timer(deadlineMs, () => {
          if (w.done) return;
          w.done = true;
          this.live--;
          resolve(undefined);
        });
      }
      this.waiters.push(w);
      this.live++;
    });
  }

  /** A connection handed out comes back (the owner then gives it again, or replaces it). */
  returned(): void {
    this.busyCount--;
  }

  /** A usable connection (new, reconnected or given back): the oldest waiter gets it, else it goes idle. */
  give(c: C): void {
    for (let w = this.waiters.pop(); w; w = this.waiters.pop()) {
      if (w.done) continue;
      w.done = true;
      this.live--;
      w.cancel?.();
      this.busyCount++;
      w.resolve(c);
      return;
    }
    this.idle.push(c);
  }

  /** Takes every idle connection out (to close them). */
  takeIdle(): C[] {
    return this.idle.splice(0);
  }
}
