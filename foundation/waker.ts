import { Worker } from 'node:worker_threads';

/**
 * Sub-millisecond wake-ups without a busy loop. Node's timers have whole-millisecond
 * resolution (and fire up to 1 ms early against performance.now()), so a schedule that
 * must send within 1 ms of each intended time either spins (a whole core at a few
 * thousand requests per second) or asks another thread: this one. A worker thread sleeps
 * in Atomics.wait, whose timeout has microsecond resolution, until the earliest pending
 * wake-up, then notifies the main thread, which waits with Atomics.waitAsync and so
 * sleeps in the event loop (I/O runs meanwhile) until then.
 *
 * Shared memory: i32[0] is a sequence number the main thread bumps when the target
 * changes (the worker waits on it), i32[1] the sequence of the last target fired (the
 * main thread waits on it), f64[0] the target in process.hrtime milliseconds (NaN: none),
 * i32[4] the thread's kernel id where Linux tells it (0: unknown), so the generator's
 * scheduling priority can be asked for this thread too (orchestrator/lab/proc/priority.ts).
 */
const WORKER = `
const { workerData } = require('node:worker_threads');
const i32 = new Int32Array(workerData, 0, 2);
const f64 = new Float64Array(workerData, 8, 1);
try { new Int32Array(workerData, 16, 1)[0] = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop()) || 0; } catch {}
const now = () => { const t = process.hrtime(); return t[0] * 1e3 + t[1] / 1e6; };
for (;;) {
  const s = Atomics.load(i32, 0);
  if (s < 0) break;
  const t = f64[0];
  if (t !== t) { Atomics.wait(i32, 0, s); continue; }
  const left = t - now();
  if (left > 0 && Atomics.wait(i32, 0, s, left) !== 'timed-out') continue;
  if (now() < t) continue;
  Atomics.store(i32, 1, s);
  Atomics.notify(i32, 1);
  Atomics.wait(i32, 0, s);
}
`;

/** Milliseconds on process.hrtime's clock (the one both threads share). */
export function hrMs(): number {
  const t = process.hrtime();
  return t[0] * 1e3 + t[1] / 1e6;
}

export interface Wake {
  readonly atHrMs: number;
  fire: (() => void) | undefined;
}

export class Waker {
  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly tid: Int32Array;
  private readonly worker: Worker | undefined;
  /** Pending wake-ups, earliest first. Usually one or two: the driver's next send. */
  private readonly pending: Wake[] = [];
  private armedAt = Number.NaN;
  private waiting = false;
  /** Holds the process open while a wake-up is pending (the worker and waitAsync do not). */
  private readonly keepAlive: NodeJS.Timeout;
  private failed = false;

  constructor() {
    const sab = new SharedArrayBuffer(24);
    this.i32 = new Int32Array(sab, 0, 2);
    this.tid = new Int32Array(sab, 16, 1);
    this.f64 = new Float64Array(sab, 8, 1);
    this.f64[0] = Number.NaN;
    // eslint-disable-next-line no-restricted-globals -- the waker is the real clock's own machinery
    this.keepAlive = setInterval(() => {}, 1 << 30);
    this.keepAlive.unref();
    try {
      this.worker = new Worker(WORKER, { eval: true, workerData: sab });
      this.worker.unref();
      // Should the thread ever die, wake-ups fall back to spinning rather than never coming.
      this.worker.on('error', () => this.fail());
      this.worker.on('exit', () => this.fail());
    } catch {
      this.failed = true;
    }
  }

  /** The thread's kernel id (Linux), once it has started; undefined before, elsewhere, or when it failed. */
  get threadId(): number | undefined {
    return this.failed ? undefined : this.tid[0] || undefined;
  }

  /** Calls `fire` at or after `atHrMs` (hrMs() time) unless cancelled. */
  at(atHrMs: number, fire: () => void): Wake {
    const w: Wake = { atHrMs, fire };
    const p = this.pending;
    let i = p.length;
    while (i > 0 && p[i - 1]!.atHrMs > atHrMs) i--;
    p.splice(i, 0, w);
    if (p.length === 1) this.keepAlive.ref();
    if (i === 0) this.arm();
    return w;
  }

  cancel(w: Wake): void {
    if (w.fire === undefined) return;
    w.fire = undefined;
    const i = this.pending.indexOf(w);
    if (i >= 0) this.pending.splice(i, 1);
    if (this.pending.length === 0) this.keepAlive.unref();
  }

  private arm(): void {
    const head = this.pending[0];
    if (!head) return;
    if (this.failed) {
      setImmediate(() => this.fired());
      return;
    }
    if (head.atHrMs === this.armedAt && this.waiting) return;
    const fired = Atomics.load(this.i32, 1);
    this.armedAt = head.atHrMs;
    this.f64[0] = head.atHrMs;
    Atomics.add(this.i32, 0, 1);
    Atomics.notify(this.i32, 0);
    if (this.waiting) return; // the outstanding waitAsync sees whichever target fires
    this.waiting = true;
    const r = Atomics.waitAsync(this.i32, 1, fired);
    if (r.async) void r.value.then(() => this.fired());
    else queueMicrotask(() => this.fired());
  }

  private fired(): void {
    this.waiting = false;
    this.armedAt = Number.NaN;
    const now = hrMs();
    const p = this.pending;
    while (p.length > 0 && p[0]!.atHrMs <= now) {
      const w = p.shift()!;
      const f = w.fire;
      w.fire = undefined;
      f?.();
    }
    if (p.length === 0) this.keepAlive.unref();
    else this.arm();
  }

  private fail(): void {
    if (this.failed) return;
    this.failed = true;
    this.waiting = false;
    if (this.pending.length > 0) setImmediate(() => this.fired());
  }
}

// Node 20 has Atomics.waitAsync (ES2024); TypeScript's lib for our target does not declare it.
declare global {
  interface Atomics {
    waitAsync(
      typedArray: Int32Array,
      index: number,
      value: number,
      timeout?: number,
    ):
      | { async: false; value: 'not-equal' | 'timed-out' }
      | { async: true; value: Promise<'ok' | 'timed-out'> };
  }
}

let shared: Waker | undefined;

/** The process's one waker, started on first use. */
export function waker(): Waker {
  return (shared ??= new Waker());
}

/**
 * Starts the waker's thread and resolves once it has woken the event loop once. A run
 * calls this before its schedule starts: a thread started on the first short wait
 * stalls the first sends by tens of milliseconds.
 */
export function warmUpClock(): Promise<void> {
  const w = waker();
  return new Promise((resolve) => w.at(hrMs(), resolve));
}
