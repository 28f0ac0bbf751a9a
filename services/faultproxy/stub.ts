import type { Clock } from '../../foundation/clock.js';
import { FifoQueue } from '../../foundation/fifoQueue.js';
import type { Rng } from '../../foundation/rng.js';
import type { Chunk, ChunkSink } from './stream.js';

/**
 * What run() needs of a toxic and of its wrapper, said structurally: toxics/Toxic.ts's Toxic
 * and ToxicWrapper fit, and the stub does not import the module that imports it.
 */
interface Piped {
  pipe(stub: ToxicStub): Promise<void>;
}
interface Wrapped {
  readonly toxicity: number;
  readonly type: string;
  readonly toxic: Piped;
}

/** What a toxic's read or sleep returns when the stub is being interrupted. */
export const INTERRUPTED: unique symbol = Symbol('interrupted');
/** What `read(deadlineMs)` returns when the deadline passed with nothing to read. */
export const TIMED_OUT: unique symbol = Symbol('timed-out');
/** A chunk, `null` for end of stream, or one of the two signals. */
export type ReadResult = Chunk | null | typeof INTERRUPTED | typeof TIMED_OUT;

/** What a stub needs from the link it belongs to. */
export interface LinkEnv {
  readonly clock: Clock;
  readonly rng: Rng;
  /** Chunks waiting in stub queues changed by `delta` (the link pauses its source when many wait). */
  queued(delta: number): void;
  /** Close both sockets of the connection with an RST instead of a FIN (reset_peer). */
  resetOnClose(): void;
}

/**
 * One toxic's place in one link (one connection, one direction), like Toxiproxy's
 * ToxicStub. The toxic config is shared by every connection; what belongs to this
 * connection (queued chunks, per-connection state) lives here.
 *
 *   previous stage --push()--> [queue] --read()--> toxic.pipe(stub) --output.push()--> next stage
 *
 * `pipe()` runs until the stream ends (the toxic calls `close()`) or the stub is
 * interrupted (to change the chain on a live connection); then it is run again.
 * Pushing never blocks: backpressure is the link's job (it counts queued chunks).
 */
export class ToxicStub implements ChunkSink {
  /** Per-connection state of a stateful toxic; survives interrupts and updates. */
  state: unknown = undefined;
  output: ChunkSink;
  /** Chunks pushed and not read yet; null is the end of stream. */
  private readonly queue = new FifoQueue<Chunk | null>();
  private waiter: ((r: ReadResult) => void) | undefined;
  private wake: (() => void) | undefined;
  private interrupting = false;
  private passing = false;
  private passDone: (() => void) | undefined;
  private running: Promise<void> | undefined;
  private closedFlag = false;

  constructor(
    private readonly env: LinkEnv,
    output: ChunkSink,
  ) {
    this.output = output;
  }

  get clock(): Clock {
    return this.env.clock;
  }

  get rng(): Rng {
    return this.env.rng;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  // ---- input side (called by the previous stage) ----

  push(c: Chunk): void {
    if (this.closedFlag) return;
    if (this.passing) {
      this.output.push(c);
      return;
    }
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.clearWake();
      w(c);
      return;
    }
    this.queue.push(c);
    this.env.queued(1);
  }

  end(): void {
    if (this.closedFlag) return;
    if (this.passing) {
      this.close();
      return;
    }
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.clearWake();
      w(null);
      return;
    }
    this.queue.push(null);
  }

  // ---- toxic side (called from pipe()) ----

  /**
   * The next chunk, `null` at end of stream, INTERRUPTED when the chain is being
   * changed (the toxic must return soon, forwarding what it holds), or TIMED_OUT when
   * `deadlineMs` (clock time) passes first. Returns synchronously when a chunk is queued.
   */
  read(deadlineMs?: number): ReadResult | Promise<ReadResult> {
    if (this.interrupting) return INTERRUPTED;
    if (this.queue.length > 0) return this.shift();
    if (deadlineMs !== undefined && deadlineMs <= this.env.clock.now()) return TIMED_OUT;
    return new Promise<ReadResult>((resolve) => {
      this.waiter = resolve;
      if (deadlineMs !== undefined) {
        const cancel = this.env.clock.timer(deadlineMs, () => {
          this.wake = undefined;
          this.waiter = undefined;
          resolve(TIMED_OUT);
        });
        this.wake = cancel;
      }
    });
  }

  /**
   * Waits `ms` (Infinity: until interrupted); resolves true when the time passed,
   * false when interrupted first. A wait under 1 ms yields one turn of the event loop
   * (timers cannot do less than 1 ms) and is not interruptible.
   */
  sleep(ms: number): boolean | Promise<boolean> {
    if (this.interrupting) return false;
    if (!(ms > 0)) return true;
    if (ms < 1) return this.env.clock.sleepUntil(this.env.clock.now() + ms).then(() => true);
    return new Promise<boolean>((resolve) => {
      const cancel =
        ms === Number.POSITIVE_INFINITY
          ? () => {}
          : this.env.clock.timer(this.env.clock.now() + ms, () => {
              this.wake = undefined;
              resolve(true);
            });
      this.wake = () => {
        cancel();
        resolve(false);
      };
    });
  }

  /** Puts an end of stream back in front of the queue (a toxic interrupted while holding it). */
  unreadEnd(): void {
    this.queue.unshift(null);
  }

  /** Waits `ms` and cannot be interrupted (Toxiproxy's reset_peer waits like this). */
  sleepThrough(ms: number): Promise<void> {
    return ms > 0 ? this.env.clock.sleepUntil(this.env.clock.now() + ms) : Promise.resolve();
  }

  /**
   * Forwards everything unchanged until interrupted or closed: the noop toxic. Queued
   * chunks go first; then pushes are handed straight to the output, with no promise
   * or queue per chunk (the no-toxic hot path).
   */
  passThrough(): Promise<void> {
    while (this.queue.length > 0) {
      const c = this.shift();
      if (c === null) {
        this.close();
        return Promise.resolve();
      }
      this.output.push(c);
    }
    if (this.interrupting || this.closedFlag) return Promise.resolve();
    this.passing = true;
    return new Promise((resolve) => (this.passDone = resolve));
  }

  /** Closes the stub: unread input is dropped and the end of stream is passed on. */
  close(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.stopPassing();
    if (this.queue.length > 0) {
      let chunks = 0;
      for (const c of this.queue.drain()) if (c !== null) chunks++;
      this.env.queued(-chunks);
    }
    this.output.end();
  }

  /** Marks the connection to be closed with an RST, then closes (reset_peer). */
  closeWithReset(): void {
    this.env.resetOnClose();
    this.close();
  }

  // ---- chain side (called by the link) ----

  /** Starts `wrapper`'s toxic on this stub, or the noop if the toxicity roll says so. */
  run(wrapper: Wrapped, noop: Piped): void {
    this.interrupting = false;
    const toxic = this.env.rng.next() < wrapper.toxicity ? wrapper.toxic : noop;
    this.running = toxic.pipe(this).catch((err: unknown) => {
      process.stderr.write(`faultproxy: toxic ${wrapper.type} failed: ${(err as Error).message}\n`);
      this.close();
    });
  }

  /**
   * Stops the running toxic so the chain can be changed. Resolves true once its
   * pipe() has returned, false when the stub is (or got) closed instead.
   */
  async interrupt(): Promise<boolean> {
    if (this.closedFlag) return false;
    this.interrupting = true;
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      this.clearWake();
      w(INTERRUPTED);
    }
    const wake = this.wake;
    if (wake) {
      this.wake = undefined;
      wake();
    }
    this.stopPassing();
    await this.running;
    return !this.closedFlag;
  }

  /** Takes every queued item (chunks and a final null) off the queue, for flushing on removal. */
  drain(): (Chunk | null)[] {
    const items = this.queue.drain();
    let chunks = 0;
    for (const c of items) if (c !== null) chunks++;
    if (chunks > 0) this.env.queued(-chunks);
    return items;
  }

  /** Marks a stub closed without ending its output (its output was already ended elsewhere). */
  markClosed(): void {
    this.closedFlag = true;
  }

  private shift(): Chunk | null {
    const c = this.queue.pop() as Chunk | null;
    if (c !== null) this.env.queued(-1);
    return c;
  }

  private stopPassing(): void {
    if (!this.passing) return;
    this.passing = false;
    const done = this.passDone;
    this.passDone = undefined;
    done?.();
  }

  private clearWake(): void {
    const wake = this.wake;
    if (wake) {
      this.wake = undefined;
      wake();
    }
  }
}
