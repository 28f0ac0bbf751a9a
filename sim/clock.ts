import type { Alarm, Clock } from '../foundation/clock.js';

/** What fireNext answers when the next timer is due after the run's limit. */
const PAST_LIMIT = 2;
/** What take answers: no timer left; the next one is due after the limit. */
const NONE = -1;
const LATER = -2;
/**
 * Node's own drain between two immediates (lib/internal/timers.js calls it before each
 * immediate but the first): the process.nextTick queue, then the microtasks, until both
 * are empty. Undocumented but kept since Node 0.x for code that emulates a tick.
 */
const drain = (process as unknown as { _tickCallback?: () => void })._tickCallback;
/** Timers fired per turn of the event loop (see `run`); one per immediate without `drain`. */
const BATCH = drain ? 512 : 1;
/** A delay (to the µs) seen this many times within one detector window gets a lane. */
const LANE_AFTER = 32;
/**
 * Detector counts restart every WINDOW irregular timers: a delay drawn from a continuous
 * distribution repeats to the µs now and then, and counted forever would get lanes that
 * stay empty and cost every take a look.
 */
const WINDOW = 4096;
const SLOT_BITS = 4;
const SLOTS = 1 << SLOT_BITS;
const MAX_LANES = 16;

/** What a timer calls: a function, or an Alarm's onAlarm (no closure made for it). */
export type TimerFn = (() => void) | Alarm;

/** Calls a timer's TimerFn. */
export function runTimerFn(fn: TimerFn): void {
  if (typeof fn === 'function') fn();
  else fn.onAlarm();
}

/** Who runs a timer's callback when it fires (a simulated process: see `timerIn`). */
export interface TimerHost {
  runTimer(epoch: number, fn: TimerFn): void;
}

/**
 * Timers set at the same delay from "now" (every attempt's timeout, 500 ms after it is
 * sent) come due in the order they were set: a FIFO holds them sorted for free. Only
 * the irregular ones (service times, arrivals) go through the heap.
 */
class Lane {
  /** Timer slots, a ring of `mask + 1` from `head` on. */
  buf = new Int32Array(64);
  mask = 63;
  head = 0;
  len = 0;
  constructor(readonly key: number) {}

  push(slot: number): void {
    if (this.len > this.mask) {
      const old = this.buf;
      const buf = new Int32Array(old.length * 2);
      for (let i = 0; i < this.len; i++) buf[i] = old[(this.head + i) & this.mask]!;
      this.buf = buf;
      this.mask = buf.length - 1;
      this.head = 0;
    }
    this.buf[(this.head + this.len++) & this.mask] = slot;
  }

  last(): number {
    return this.buf[(this.head + this.len - 1) & this.mask]!;
  }

  shift(): void {
    this.head = (this.head + 1) & this.mask;
    this.len--;
  }
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
 * - a timer is a slot in typed arrays, not an object (about 3 million of them in a 10
 *   minute run at 1000/s: what the garbage collector no longer sees), in a binary heap
 *   of slots that moves a hole instead of swapping, or in a lane (repeated delays);
 *   cancelled timers stay in until their time comes (cancelling is O(1)).
 *
 * Deterministic: nothing here reads the wall clock, and the order of events depends
 * only on times and creation order.
 */
export class SimClock implements Clock {
  private t = 0;
  private seq = 0;
  // A pending timer is a slot in these parallel arrays (no object per timer); a slot is
  // free again once the timer is taken out, fired or cancelled.
  private atOf = new Float64Array(1024);
  /** Creation order, the tie-break; also tells a cancel whether its slot was reused. */
  private seqOf = new Float64Array(1024);
  private epochOf = new Float64Array(1024);
  /** undefined: cancelled (or free). */
  private readonly fnOf: (TimerFn | undefined)[] = [];
  private readonly hostOf: (TimerHost | undefined)[] = [];
  private free = new Int32Array(1024);
  private nFree = 0;
  private slots = 0;
  /** A binary heap of slots by (time, seq). */
  private heap = new Int32Array(1024);
  private n = 0;
  private readonly lanes: Lane[] = [];
  private readonly laneKeys = new Float64Array(MAX_LANES);
  /** A small detector of frequent delays: µs keys and their counts. */
  private readonly slotKey = new Float64Array(SLOTS).fill(-1);
  private readonly slotCount = new Int32Array(SLOTS);
  private windowLeft = WINDOW;
  /** Timers fired so far: the simulation's events. */
  fired = 0;

  now(): number {
    return this.t;
  }

  timer(atMs: number, fn: () => void): () => void {
    return this.canceller(this.add(atMs, fn, undefined, 0));
  }

  /**
   * As `timer`, but fires as `host.runTimer(epoch, fn)`: a process's timers without a
   * closure each.
   */
  timerIn(atMs: number, fn: TimerFn, host: TimerHost, epoch: number): () => void {
    return this.canceller(this.add(atMs, fn, host, epoch));
  }

  /** As `timerIn`, for a timer nobody cancels: no canceller made (the api's work timers, one an attempt). */
  schedule(atMs: number, fn: TimerFn, host: TimerHost, epoch: number): void {
    this.add(atMs, fn, host, epoch);
  }

  /** A timer calling `target.onAlarm()`, no closure made: its handle is its slot. */
  alarm(atMs: number, target: Alarm): number {
    return this.add(atMs, target, undefined, 0);
  }

  /**
   * The slot still holds `target`'s alarm unless it rang (and was maybe reused): a holder
   * drops its handle once its alarm rang, and another's alarm in the slot is not touched.
   */
  cancelAlarm(handle: number, target: Alarm): void {
    if (this.fnOf[handle] === target) {
      this.fnOf[handle] = undefined;
      this.hostOf[handle] = undefined;
    }
  }

  private canceller(slot: number): () => void {
    const seq = this.seqOf[slot]!;
    return () => {
      if (this.seqOf[slot] === seq) {
        this.fnOf[slot] = undefined;
        this.hostOf[slot] = undefined;
      }
    };
  }

  /** Sets a timer; answers its slot. */
  private add(atMs: number, fn: TimerFn, host: TimerHost | undefined, epoch: number): number {
    if (this.nFree === 0) this.grow();
    const slot = this.free[--this.nFree]!;
    const t = this.t;
    const at = atMs > t ? atMs : t;
    this.atOf[slot] = at;
    this.seqOf[slot] = this.seq++;
    this.epochOf[slot] = epoch;
    this.fnOf[slot] = fn;
    this.hostOf[slot] = host;
    if (at > t) {
      const key = Math.round((at - t) * 1000);
      const lanes = this.lanes;
      let lane: Lane | undefined;
      for (let i = 0; i < lanes.length; i++)
        if (this.laneKeys[i] === key) {
          lane = lanes[i]!;
          break;
        }
      lane ??= this.maybeLane(key);
      // A lane must stay sorted: (t + d) for a rounded d can step back by an ulp.
      if (lane && (lane.len === 0 || this.atOf[lane.last()]! <= at)) {
        lane.push(slot);
        return slot;
      }
    }
    this.push(slot);
    return slot;
  }

  private grow(): void {
    const old = this.slots;
    const size = old === 0 ? 1024 : old * 2;
    if (old > 0) {
      const widen = (a: Float64Array): Float64Array<ArrayBuffer> => {
        const b = new Float64Array(size);
        b.set(a);
        return b;
      };
      this.atOf = widen(this.atOf);
      this.seqOf = widen(this.seqOf);
      this.epochOf = widen(this.epochOf);
      const heap = new Int32Array(size);
      heap.set(this.heap);
      this.heap = heap;
      this.free = new Int32Array(size);
    }
    // Lowest slots first out: they were the first allocated, and stay in cache.
    for (let s = size - 1; s >= old; s--) this.free[this.nFree++] = s;
    for (let s = old; s < size; s++) {
      this.fnOf.push(undefined);
      this.hostOf.push(undefined);
    }
    this.slots = size;
  }

  /**
   * Counts a delay (µs); one that keeps coming gets a lane. Each delay has one detector
   * slot (a hash); another delay there takes a count away, and the slot once it is 0.
   */
  private maybeLane(key: number): Lane | undefined {
    if (--this.windowLeft === 0) {
      this.windowLeft = WINDOW;
      this.slotCount.fill(0);
    }
    const i = Math.imul(key | 0, 0x9e3779b1) >>> (32 - SLOT_BITS);
    if (this.slotKey[i] !== key) {
      if (this.slotCount[i]! > 0) this.slotCount[i]!--;
      else {
        this.slotKey[i] = key;
        this.slotCount[i] = 1;
      }
      return undefined;
    }
    if (++this.slotCount[i]! < LANE_AFTER || this.lanes.length >= MAX_LANES) return undefined;
    this.slotKey[i] = -1;
    this.slotCount[i] = 0;
    const lane = new Lane(key);
    this.laneKeys[this.lanes.length] = key;
    this.lanes.push(lane);
    return lane;
  }

  sleepUntil(atMs: number, signal?: AbortSignal): Promise<void> {
    if (atMs <= this.t || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      if (!signal) {
        this.add(atMs, resolve, undefined, 0);
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
    let n = 0;
    for (let i = 0; i < this.n; i++) if (this.fnOf[this.heap[i]!]) n++;
    for (const l of this.lanes)
      for (let i = 0; i < l.len; i++) if (this.fnOf[l.buf[(l.head + i) & l.mask]!]) n++;
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
   * Takes the next timer out (cancelled ones included) and answers its slot, which the
   * caller frees; NONE when none is left; LATER, leaving it in, when it is due after `limitMs`.
   */
  private take(limitMs: number): number {
    const atOf = this.atOf;
    const seqOf = this.seqOf;
    let best = this.n > 0 ? this.heap[0]! : NONE;
    let from: Lane | undefined;
    const lanes = this.lanes;
    for (let i = 0; i < lanes.length; i++) {
      const l = lanes[i]!;
      if (l.len === 0) continue;
      const s = l.buf[l.head]!;
      if (best === NONE || atOf[s]! < atOf[best]! || (atOf[s] === atOf[best] && seqOf[s]! < seqOf[best]!)) {
        best = s;
        from = l;
      }
    }
    if (best === NONE) return NONE;
    if (atOf[best]! > limitMs) return LATER;
    if (from) from.shift();
    else this.pop();
    return best;
  }

  /** Fires the next live timer; false when there is none, PAST_LIMIT when the next is due after `limitMs`. */
  private fireNext(limitMs = Number.POSITIVE_INFINITY): boolean | typeof PAST_LIMIT {
    for (;;) {
      const s = this.take(limitMs);
      if (s === LATER) return PAST_LIMIT;
      if (s === NONE) return false;
      const fn = this.fnOf[s];
      const host = this.hostOf[s];
      this.fnOf[s] = undefined;
      this.hostOf[s] = undefined;
      this.free[this.nFree++] = s;
      if (fn === undefined) continue;
      const at = this.atOf[s]!;
      if (at > this.t) this.t = at;
      this.fired++;
      if (host === undefined) runTimerFn(fn);
      else host.runTimer(this.epochOf[s]!, fn);
      return true;
    }
  }

  private push(slot: number): void {
    const h = this.heap;
    const atOf = this.atOf;
    const at = atOf[slot]!;
    const seq = this.seqOf[slot]!;
    let i = this.n++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const ps = h[p]!;
      const pat = atOf[ps]!;
      if (!(at < pat || (at === pat && seq < this.seqOf[ps]!))) break;
      h[i] = ps;
      i = p;
    }
    h[i] = slot;
  }

  /** Removes the top (the caller has read it). */
  private pop(): void {
    const h = this.heap;
    const atOf = this.atOf;
    const seqOf = this.seqOf;
    const n = --this.n;
    if (n === 0) return;
    const last = h[n]!;
    const lat = atOf[last]!;
    const lseq = seqOf[last]!;
    let i = 0;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= n) break;
      let cs = h[c]!;
      let cat = atOf[cs]!;
      const r = c + 1;
      if (r < n) {
        const rs = h[r]!;
        const rat = atOf[rs]!;
        if (rat < cat || (rat === cat && seqOf[rs]! < seqOf[cs]!)) {
          c = r;
          cs = rs;
          cat = rat;
        }
      }
      if (!(cat < lat || (cat === lat && seqOf[cs]! < lseq))) break;
      h[i] = cs;
      i = c;
    }
    h[i] = last;
  }
}
