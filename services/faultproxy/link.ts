import type { Socket } from 'node:net';
import type { Clock } from '../../foundation/clock.js';
import type { Rng } from '../../foundation/rng.js';
import type { Chunk, ChunkSink, Direction } from './stream.js';
import { ToxicStub, type LinkEnv } from './stub.js';
import { noop } from './toxics/noop.js';
import { hasCleanup, isBuffered, isStateful, type ToxicWrapper } from './toxics/Toxic.js';

/**
 * One accepted client and its upstream socket. Closing follows Toxiproxy: when either
 * link ends it closes its destination socket outright (no half-close), which ends
 * the other link in turn.
 */
export class Connection {
  /** Set by reset_peer: both sockets close with an RST (Go's SetLinger(0)). */
  resetOnClose = false;
  private finishedLinks = 0;

  constructor(
    readonly client: Socket,
    readonly upstream: Socket,
    private readonly onGone: (c: Connection) => void,
  ) {}

  closeSocket(s: Socket): void {
    if (s.destroyed) return;
    if (this.resetOnClose) {
      s.resetAndDestroy();
      return;
    }
    // Go's Close(): what was written still goes out, then FIN; reading stops too.
    s.end();
    if (s.writableFinished) s.destroy();
    else s.once('finish', () => s.destroy());
  }

  /** Closes both sockets (the proxy was disabled or deleted). */
  close(): void {
    this.closeSocket(this.client);
    this.closeSocket(this.upstream);
  }

  linkFinished(): void {
    if (++this.finishedLinks === 2) this.onGone(this);
  }
}

export interface LinkDeps {
  readonly clock: Clock;
  readonly rng: Rng;
}

/**
 * One direction of one connection: the source socket's chunks go through a chain of
 * stubs, one per toxic (a hidden noop first), into the destination socket.
 *
 *   source ──data──▶ [noop] ──▶ [latency] ──▶ [bandwidth] ──▶ writer ──▶ dest
 *
 * Backpressure: the source is paused while the destination's buffer is full or too
 * many chunks wait inside the chain (Toxiproxy's channels block the same way).
 */
export class ToxicLink implements LinkEnv {
  readonly stubs: ToxicStub[] = [];
  readonly clock: Clock;
  readonly rng: Rng;
  private queuedChunks = 0;
  private highWater = 16;
  private paused = false;
  private sourceEnded = false;
  private writerEnded = false;
  private readonly writer: ChunkSink;

  constructor(
    private readonly conn: Connection,
    readonly direction: Direction,
    private readonly source: Socket,
    private readonly dest: Socket,
    deps: LinkDeps,
    private readonly onFinished: (l: ToxicLink) => void,
  ) {
    this.clock = deps.clock;
    this.rng = deps.rng;
    this.writer = {
      push: (c: Chunk) => {
        if (this.writerEnded || dest.destroyed) return;
        if (!dest.write(c.data)) this.pause();
      },
      end: () => {
        if (this.writerEnded) return;
        this.writerEnded = true;
        conn.closeSocket(dest);
        this.onFinished(this);
        conn.linkFinished();
      },
    };
  }

  /** Builds the stubs for `chain` (noop first), starts every toxic, then starts reading. */
  start(chain: readonly ToxicWrapper[]): void {
    for (let i = chain.length - 1; i >= 0; i--) {
      const stub = new ToxicStub(this, this.stubs[0] ?? this.writer);
      this.stubs.unshift(stub);
    }
    chain.forEach((w, i) => {
      const stub = this.stubs[i]!;
      if (isStateful(w.toxic)) stub.state = w.toxic.newState();
      stub.run(w, noop);
    });
    this.setHighWater(chain);
    const source = this.source;
    source.on('data', (data: Buffer) => {
      this.stubs[0]!.push({ data, timestampMs: this.clock.now() });
      if (this.queuedChunks >= this.highWater) this.pause();
    });
    const ended = (): void => {
      if (this.sourceEnded) return;
      this.sourceEnded = true;
      this.stubs[0]!.end();
    };
    source.on('end', ended);
    source.on('close', ended);
    this.dest.on('drain', () => this.maybeResume());
    source.resume();
  }

  // ---- LinkEnv ----

  queued(delta: number): void {
    this.queuedChunks += delta;
    if (delta < 0 && this.paused) this.maybeResume();
  }

  resetOnClose(): void {
    this.conn.resetOnClose = true;
  }

  // ---- changing the chain of a live connection (Toxiproxy's link.go) ----

  /** Appends `w` to the chain; `before` is the toxic ahead of it, re-run after the splice. */
  async addToxic(w: ToxicWrapper, before: ToxicWrapper, chain: readonly ToxicWrapper[]): Promise<void> {
    const last = this.stubs[this.stubs.length - 1]!;
    const stub = new ToxicStub(this, last.output);
    this.stubs.push(stub);
    if (await last.interrupt()) {
      last.output = stub;
      if (isStateful(w.toxic)) stub.state = w.toxic.newState();
      stub.run(w, noop);
      last.run(before, noop);
      this.setHighWater(chain);
    } else {
      stub.markClosed(); // the link is closing: the new stub only keeps indexes aligned
    }
  }

  /** Re-runs the stub of `w` with its new settings. */
  async updateToxic(w: ToxicWrapper): Promise<void> {
    const stub = this.stubs[w.index];
    if (stub && (await stub.interrupt())) stub.run(w, noop);
  }

  /**
   * Takes `w` (at `index`) out of the chain. The toxic is interrupted (it forwards what
   * it holds), its queue is flushed without delay, and the toxic ahead of it is
   * re-wired to its output. A cleanup toxic (timeout) closes the link instead.
   */
  async removeToxic(
    w: ToxicWrapper,
    index: number,
    before: ToxicWrapper,
    chain: readonly ToxicWrapper[],
  ): Promise<void> {
    const stub = this.stubs[index];
    const prev = this.stubs[index - 1];
    if (!stub || !prev || !(await stub.interrupt())) return;
    if (hasCleanup(w.toxic)) {
      w.toxic.cleanup(stub);
      if (stub.closed) return;
    }
    await prev.interrupt();
    for (const c of stub.drain()) {
      if (c === null) {
        stub.close();
        return;
      }
      stub.output.push(c);
    }
    prev.output = stub.output;
    this.stubs.splice(index, 1);
    prev.run(before, noop);
    this.setHighWater(chain);
  }

  private setHighWater(chain: readonly ToxicWrapper[]): void {
    let n = 16;
    for (const w of chain) if (isBuffered(w.toxic)) n += w.toxic.bufferSize();
    this.highWater = n;
  }

  private pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.source.pause();
  }

  private maybeResume(): void {
    if (!this.paused || this.dest.writableNeedDrain || this.queuedChunks > this.highWater / 2) return;
    this.paused = false;
    this.source.resume();
  }
}
