import type { AbortSignalLike } from './abortSignal.js';
import { hrMs, waker, type Wake } from './waker.js';

/**
 * Time, injected. Everything in bench/ asks a Clock for "now" and for timers, so the
 * same load engine and client policies run in real time (RealClock) and in virtual
 * time (VirtualClock, used by tests and by the simulator).
 *
 * All times are milliseconds since the clock's origin (the run start), as floats.
 */
export interface Clock {
  /** Milliseconds since the origin. Monotonic, never blocks. */
  now(): number;
  /**
   * Resolves at or after `atMs`. If `signal` aborts first it resolves early (callers
   * check `signal.aborted`); it never rejects, so a cancelled wait is not an error path.
   */
  sleepUntil(atMs: number, signal?: AbortSignalLike): Promise<void>;
  /** Calls `fn` at or after `atMs` unless the returned cancel function is called first. */
  timer(atMs: number, fn: () => void): () => void;
  /**
   * As `timer`, calling `target.onAlarm()`, and answering a handle for `cancelAlarm`: a
   * timer with no closure (the simulator sets one or two an attempt). Optional: callers go
   * through `setAlarm` and `clearAlarm` below, which serve a clock with `timer` alone.
   */
  alarm?(atMs: number, target: Alarm): number;
  /** Cancels `target`'s alarm `handle`; only before it rang (a handle is not kept after). */
  cancelAlarm?(handle: number, target: Alarm): void;
  /**
   * Lets pending I/O run before going on (real time: one event-loop turn). A driver that
   * is behind its schedule calls it between bursts of sends, so that responses are read
   * and their connections reused instead of a new connection opened for every send.
   */
  yieldToIo?(): Promise<void>;
  /** The origin in epoch ms, where the clock is the wall's (for Grafana's annotations). */
  readonly originEpochMs?: number;
}

/** What a handle-form timer calls (Clock.alarm): a method of the object that set it. */
export interface Alarm {
  onAlarm(): void;
}

/** A clock without `alarm`: its alarms as `timer`s, their cancellers by handle. */
const alarmTables = new WeakMap<Clock, { next: number; readonly live: Map<number, () => void> }>();

/**
 * Sets `target`'s alarm at `atMs` on any clock; answers its handle (a whole number >= 0).
 * The clock's own `alarm` where it has one, else a `timer` (a closure, as before).
 */
export function setAlarm(clock: Clock, atMs: number, target: Alarm): number {
  if (clock.alarm) return clock.alarm(atMs, target);
  let table = alarmTables.get(clock);
  if (!table) alarmTables.set(clock, (table = { next: 0, live: new Map() }));
  const { live } = table;
  const handle = table.next++;
  // `timer` may not call back before it returns: the handle is in the table first.
  live.set(
    handle,
    clock.timer(atMs, () => {
      live.delete(handle);
      target.onAlarm();
    }),
  );
  return handle;
}

/** Cancels `target`'s alarm `handle` (set by setAlarm on `clock`) if it has not rung. */
export function clearAlarm(clock: Clock, handle: number, target: Alarm): void {
  if (clock.cancelAlarm) return clock.cancelAlarm(handle, target);
  const live = alarmTables.get(clock)?.live;
  const cancel = live?.get(handle);
  if (!cancel) return;
  live!.delete(handle);
  cancel();
}

/** Below this, a wait is finished by the waker (foundation/waker.ts) instead of a timer. */
const FINE_MS = 2;
/** Below this, a wait is spun out with setImmediate (cheaper than a wake-up). */
const SPIN_MS = 0.1;

/** Wall-clock time from performance.now(), with its origin at construction. */
export class RealClock implements Clock {
  readonly originMs: number;
  /** Epoch milliseconds at the origin, for timestamps a person reads. */
  readonly originEpochMs: number;
  /** hrMs() at the origin: the waker's time base. */
  private readonly originHrMs: number;

  constructor() {
    this.originMs = performance.now();
    this.originHrMs = hrMs();
    this.originEpochMs = Date.now();
  }

  now(): number {
    return performance.now() - this.originMs;
  }

  /**
   * Never resolves before `atMs`, and not much after: Node's timers have whole-millisecond
   * resolution and may fire up to 1 ms early against performance.now(), so a timer only
   * brings the wait within 2 ms and the waker's thread ends it to the microsecond, while
   * the event loop sleeps (no busy loop: at 5 000 sends/s spinning out the remainders
   * cost a whole core).
   */
  sleepUntil(atMs: number, signal?: AbortSignalLike): Promise<void> {
    if (atMs <= this.now() || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const cancel = this.timer(atMs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
    });
  }

  yieldToIo(): Promise<void> {
    return new Promise((resolve) => setImmediate(resolve));
  }

  /** Calls `fn` at or after `atMs`, never before (a 100 ms latency toxic never delays 99.9). */
  timer(atMs: number, fn: () => void): () => void {
    let cancelled = false;
    let handle: NodeJS.Timeout | undefined;
    let spin: NodeJS.Immediate | undefined;
    let wake: Wake | undefined;
    const fine = (): void => {
      handle = undefined;
      spin = undefined;
      wake = undefined;
      if (cancelled) return;
      const left = atMs - this.now();
      if (left <= 0) fn();
      // A wake-up through the waker's thread costs tens of microseconds of CPU; a wait
      // shorter than that is cheaper spun out (and a busy loop spins little anyway).
      else if (left < SPIN_MS) spin = setImmediate(fine);
      // originHrMs was read just after originMs, so this target is never early; `fine`
      // checks again all the same.
      else wake = waker().at(this.originHrMs + atMs, fine);
    };
    // Never calls `fn` before returning (callers hold the cancel function in a const).
    const left = atMs - this.now();
    if (left >= FINE_MS) handle = setTimeout(fine, left - FINE_MS / 2);
    else if (left < SPIN_MS) spin = setImmediate(fine);
    else wake = waker().at(this.originHrMs + atMs, fine);
    return () => {
      cancelled = true;
      if (handle) clearTimeout(handle);
      if (spin) clearImmediate(spin);
      if (wake) waker().cancel(wake);
    };
  }
}

interface VirtualTimer {
  atMs: number;
  seq: number;
  fn: (() => void) | undefined;
}

/**
 * Virtual time for tests and simulation: time moves only when `advanceTo` or
 * `runUntilIdle` is called. Timers fire in (time, creation) order; between two
 * timers every pending promise continuation runs, so async code that schedules
 * further timers behaves as it would in real time.
 */
export class VirtualClock implements Clock {
  private t = 0;
  private seq = 0;
  private heap: VirtualTimer[] = [];

  now(): number {
    return this.t;
  }

  timer(atMs: number, fn: () => void): () => void {
    const entry: VirtualTimer = { atMs: Math.max(atMs, this.t), seq: this.seq++, fn };
    this.push(entry);
    return () => {
      entry.fn = undefined;
    };
  }

  sleepUntil(atMs: number, signal?: AbortSignalLike): Promise<void> {
    if (atMs <= this.t || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const cancel = this.timer(atMs, () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      });
      const onAbort = (): void => {
        cancel();
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Fires every timer due at or before `untilMs`, then sets the time to `untilMs`. */
  async advanceTo(untilMs: number): Promise<void> {
    await settle();
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || top.atMs > untilMs) break;
      this.pop();
      if (top.atMs > this.t) this.t = top.atMs;
      if (top.fn) {
        top.fn();
        await settle();
      }
    }
    if (untilMs > this.t) this.t = untilMs;
  }

  /**
   * Moves the time forward without firing the timers on the way, as if the event loop
   * had been blocked: they fire late, at the next advance, and see the later time.
   */
  jumpTo(ms: number): void {
    if (ms > this.t) this.t = ms;
  }

  /** Fires timers until none is left (or `limitMs` is reached). */
  async runUntilIdle(limitMs = Number.POSITIVE_INFINITY): Promise<void> {
    await settle();
    for (;;) {
      const top = this.heap[0];
      if (top === undefined || top.atMs > limitMs) return;
      await this.advanceTo(top.atMs);
    }
  }

  get pendingTimers(): number {
    return this.heap.filter((e) => e.fn !== undefined).length;
  }

  private push(e: VirtualTimer): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) return;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

function before(a: VirtualTimer, b: VirtualTimer): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

/** Lets every queued promise continuation run (one macrotask turn). */
function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
