/**
 * A FIFO over an array with a head index: O(1) amortised dequeue without shift()'s
 * copying. The one queue of the api's connection pool, the load
 * generator's connection waiters, the fault proxy's chunk queues and the simulator's.
 * Besides push and pop it can put an item back in front (`unshift`), look at either
 * end, take the newest (`popNewest`: a stack of idle connections whose oldest expire
 * from the front) and empty itself (`drain`).
 */
export class FifoQueue<T> {
  /** Taken from head on; a taken slot is cleared (undefined) until the array is compacted. */
  private items: (T | undefined)[] = [];
  private head = 0;

  /** At most `bound` items (push refuses beyond). */
  constructor(private readonly bound = Infinity) {}

  get length(): number {
    return this.items.length - this.head;
  }

  /** Adds an item at the back; false (and the item is not queued) when the queue is full. */
  push(item: T): boolean {
    if (this.length >= this.bound) return false;
    this.items.push(item);
    return true;
  }

  /** The oldest item, taken off; undefined when empty. */
  pop(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }

  /** The oldest item, left in place. */
  peek(): T | undefined {
    return this.head < this.items.length ? this.items[this.head] : undefined;
  }

  /** The newest item, taken off. */
  popNewest(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items.pop();
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    }
    return item;
  }

  /** Puts `item` back in front (the next pop returns it). */
  unshift(item: T): void {
    if (this.head > 0) this.items[--this.head] = item;
    else this.items.unshift(item);
  }

  /** Takes every item off, oldest first. */
  drain(): T[] {
    const rest = this.items.slice(this.head) as T[];
    this.items.length = 0;
    this.head = 0;
    return rest;
  }
}
