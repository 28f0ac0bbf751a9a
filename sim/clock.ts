import type { Clock } from '../foundation/clock.js';

interface Entry {
  readonly atMs: number;
  readonly seq: number;
  fn: (() => void) | undefined;
}

/** What fireNext and take answer when the next timer is due after the run's limit. */
const PAST_LIMIT = 2;
/**
 * Node's own drain between two immediates (lib/internal/timers.js calls it before each
 * immediate but the first): the process.nextTick queue, then the microtasks, until both
 * are empty. Undocumented but kept since Node 0.x for code that emulates a tick.
 */
const drain = (process as unknown as { _tickCallback?: () => void })._tickCallback;
/** Timers fired per turn of the event loop (see `run`); one per immediate without `drain`. */
const BATCH = drain ? 512 : 1;
/** A delay (to the µs) seen this many times in a row of its detector slot gets a lane. */
const LANE_AFTER = 32;
const SLOTS = 8;
const MAX_LANES = 16;

/**
 * Timers set at the same delay from "now" (every attempt's timeout, 500 ms after it is
 * sent) come due in the order they were set: a FIFO holds them sorted for free. Only
 * the irregular ones (service times, arrivals) go through the heap.
 */
interface Lane {
  readonly delayMs: number;
  /** Taken from head on; a taken slot is cleared (undefined) until the array is compacted. */
  items: (Entry | undefined)[];
  head: number;
}

/**
 * The simulator's clock: virtual time that moves from one timer to the next. Timers
 * fire in (time, creation) order, and between two timers every pending promise
 * continuation runs, so the promise-based load engine and client policies (bench/)
 * behave as they do in real time, only without waiting. Same semantics as bench's
 * VirtualClock, which tests drive step by step; this one is built to run a whole
 * experiment fast:
 *
 * - after each timer it runs Node's own drain (`drain`: what Node runs between two
 *   immediates), so a fired timer's promise chains have all run before the next timer
 *   fires, and one immediate, one turn of the event loop, serves `BATCH` timers;
 * - a binary heap that moves a hole instead of swapping, and cancelled timers left in
 *   the heap until their time comes (cancelling is O(1)).
 *
 * Deterministic: nothing here reads the wall clock, and the order of events depends
 * only on times and creation order.
 */
export class SimClock implements Clock {
  private t = 0;
  private seq = 0;
  private readonly heap: Entry[] = [];
  private readonly lanes: Lane[] = [];
  private readonly laneOf = new Map<number, Lane>();
  /** A small detector of frequent delays: µs keys and their counts, the rarest slot replaced. */
  private readonly slotKey = new Float64Array(SLOTS).fill(-1);
  private readonly slotCount = new Int32Array(SLOTS);
  /** Timers fired so far: the simulation's events. */
  fired = 0;

  now(): number {
    return this.t;
  }

  timer(atMs: number, fn: () => void): () => void {
    const e: Entry = { atMs: atMs > this.t ? atMs : this.t, seq: this.seq++, fn };
    const d = e.atMs - this.t;
    if (d > 0) {
      const key = Math.round(d * 1000);
      const lane = this.laneOf.get(key) ?? this.maybeLane(key);
      // A lane must stay sorted: (t + d) for a rounded d can step back by an ulp.
      const last = lane?.items[lane.items.length - 1];
      if (lane && (last === undefined || last.atMs <= e.atMs)) {
        lane.items.push(e);
        return () => {
          e.fn = undefined;
        };
      }
    }
    this.push(e);
    return () => {
      e.fn = undefined;
    };
  }

  /** Counts a delay (µs); one that keeps coming gets a lane. */
  private maybeLane(key: number): Lane | undefined {
    let rarest = 0;
    for (let i = 0; i < SLOTS; i++) {
      if (this.slotKey[i] === key) {
        if (++this.slotCount[i]! < LANE_AFTER || this.lanes.length >= MAX_LANES) return undefined;
        this.slotKey[i] = -1;
        this.slotCount[i] = 0;
        const lane: Lane = { delayMs: key / 1000, items: [], head: 0 };
        this.lanes.push(lane);
        this.laneOf.set(key, lane);
        return lane;
      }
      if (this.slotCount[i]! < this.slotCount[rarest]!) rarest = i;
    }
    this.slotKey[rarest] = key;
    this.slotCount[rarest] = 1;
    return undefined;
  }

  sleepUntil(atMs: number, signal?: AbortSignal): Promise<void> {
    if (atMs <= this.t || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      if (!signal) {
        this.timer(atMs, resolve);
        return;
      }
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      const cancel = this.timer(atMs, () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Timers still to fire (cancelled ones excluded). O(n): for tests. */
  get pendingTimers(): number {
    let n = this.heap.filter((e) => e.fn !== undefined).length;
    for (const l of this.lanes) for (let i = l.head; i < l.items.length; i++) if (l.items[i]!.fn) n++;
    return n;
  }

  /**
   * Fires timers until `until` settles, and settles the same way. Rejects if no timer is
   * left while `until` is still pending (nothing could ever settle it: a deadlock).
   * Between batches the event loop turns, so signals (Ctrl-C) and file writes go on.
   * `limitMs`: a timer due later than this is an error (a run that never ends).
   */
  run<T>(until: Promise<T>, limitMs = Number.POSITIVE_INFINITY): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let ok = true;
      let value: T | undefined;
      let error: unknown;
      until.then(
        (v) => {
          settled = true;
          value = v;
        },
        (e: unknown) => {
          settled = true;
          ok = false;
          error = e;
        },
      );
      let idlePolls = 0;
      const finish = (): void => {
        if (ok) resolve(value as T);
        else reject(error);
      };
      // Nothing due: what runs may still be waiting for real I/O (a file); poll a while.
      const idle = (): void => {
        if (settled) return finish();
        if (this.fireNext()) {
          idlePolls = 0;
          return void setImmediate(step);
        }
        if (++idlePolls > 200)
          return reject(
            new Error('the simulation has no event left, but the run has not ended (a deadlock)'),
          );
        setTimeout(idle, 1);
      };
      // Up to BATCH timers, each followed by the drain Node itself runs between two
      // immediates; then the event loop turns.
      const step = (): void => {
        for (let i = 0; i < BATCH; i++) {
          if (settled) return finish();
          const fired = this.fireNext(limitMs);
          if (fired === PAST_LIMIT)
            return reject(
              new Error(`the simulation went past ${limitMs} ms of virtual time without the run ending`),
            );
          if (!fired) return void setImmediate(idle);
          drain?.();
        }
        setImmediate(step);
      };
      setImmediate(step);
    });
  }

  /**
   * Takes the next timer out (cancelled ones included); undefined when none is left;
   * PAST_LIMIT, leaving it in, when it is due after `limitMs`.
   */
  private take(limitMs: number): Entry | typeof PAST_LIMIT | undefined {
    let best = this.heap[0];
    let from: Lane | undefined;
    for (const l of this.lanes) {
      const e = l.items[l.head];
      if (e !== undefined && (best === undefined || before(e, best))) {
        best = e;
        from = l;
      }
    }
    if (best === undefined) return undefined;
    if (best.atMs > limitMs) return PAST_LIMIT;
    if (!from) return this.pop();
    from.items[from.head++] = undefined;
    if (from.head === from.items.length) {
      from.items = [];
      from.head = 0;
    } else if (from.head > 4096 && from.head * 2 > from.items.length) {
      from.items = from.items.slice(from.head);
      from.head = 0;
    }
    return best;
  }

  /** Fires the next live timer; false when there is none, PAST_LIMIT when the next is due after `limitMs`. */
  private fireNext(limitMs = Number.POSITIVE_INFINITY): boolean | typeof PAST_LIMIT {
    for (;;) {
      const e = this.take(limitMs);
      if (e === PAST_LIMIT) return e;
      if (e === undefined) return false;
      const fn = e.fn;
      if (fn === undefined) continue;
      e.fn = undefined;
      if (e.atMs > this.t) this.t = e.atMs;
      this.fired++;
      fn();
      return true;
    }
  }

  private push(e: Entry): void {
    const h = this.heap;
    let i = h.length;
    h.push(e);
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pe = h[p]!;
      if (!(e.atMs < pe.atMs || (e.atMs === pe.atMs && e.seq < pe.seq))) break;
      h[i] = pe;
      i = p;
    }
    h[i] = e;
  }

  private pop(): Entry {
    const h = this.heap;
    const top = h[0]!;
    const last = h.pop()!;
    const n = h.length;
    if (n > 0) {
      let i = 0;
      for (;;) {
        let c = 2 * i + 1;
        if (c >= n) break;
        const r = c + 1;
        if (r < n && before(h[r]!, h[c]!)) c = r;
        if (!before(h[c]!, last)) break;
        h[i] = h[c]!;
        i = c;
      }
      h[i] = last;
    }
    return top;
  }
}

function before(a: Entry, b: Entry): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}
