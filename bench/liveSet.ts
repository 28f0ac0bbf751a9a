/** What a LiveSet holds: its slot there, kept on the item (-1 or absent: not held). */
export interface LiveItem {
  liveSlot?: number | undefined;
}

/**
 * The items in flight (the driver's origins, the simulated api's requests), in the order
 * they came, as a Set keeps them, without hashing: each item knows its slot in an array,
 * so taking it out touches only it and its slot, and the array is compacted once it is
 * more holes than items. Millions go in and out of one in a run.
 */
export class LiveSet<T extends LiveItem> {
  private slots: (T | undefined)[] = [];
  /** The first slot that may hold an item. */
  private head = 0;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `item` at the end; one already held keeps its place. */
  add(item: T): void {
    if (item.liveSlot !== undefined && item.liveSlot >= 0) return;
    item.liveSlot = this.slots.length;
    this.slots.push(item);
    this.count++;
  }

  delete(item: T): void {
    const i = item.liveSlot;
    if (i === undefined || i < 0) return;
    item.liveSlot = -1;
    const slots = this.slots;
    slots[i] = undefined;
    if (--this.count === 0) {
      slots.length = 0;
      this.head = 0;
      return;
    }
    while (slots[this.head] === undefined) this.head++;
    // Holes (behind the head or among the items) more than the items: compact, O(items).
    if (slots.length > 2 * this.count + 64) this.compact();
  }

  /** The items held, in the order they came (a copy: the set may change while it is walked). */
  values(): T[] {
    const out: T[] = [];
    for (let i = this.head; i < this.slots.length; i++) {
      const item = this.slots[i];
      if (item !== undefined) out.push(item);
    }
    return out;
  }

  /** Takes every item out, in the order they came. */
  drain(): T[] {
    const out = this.values();
    for (const item of out) item.liveSlot = -1;
    this.slots = [];
    this.head = 0;
    this.count = 0;
    return out;
  }

  private compact(): void {
    const live = this.values();
    for (let i = 0; i < live.length; i++) live[i]!.liveSlot = i;
    this.slots = live;
    this.head = 0;
  }
}
