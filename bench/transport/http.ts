import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import { connect, type Socket } from 'node:net';
import { HTTPParser } from 'http-parser-js';
import type { Clock } from '../../foundation/clock.js';
import type { Attempt, OutcomeKind } from '../outcome.js';
import { kindOfStatus } from '../outcome.js';
import { parseRetryAfter } from '../../foundation/retryAfter.js';
import { SseMeter } from './sse.js';
import type { Transport, TransportResult } from './Transport.js';

export { parseRetryAfter } from '../../foundation/retryAfter.js';

export interface HttpTransportOptions {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  /** The request of origins that carry none (no workload mix). */
  readonly method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path?: string;
  /**
   * Most attempts on the wire at once (one per connection). Derived by default from the
   * peak attempt rate and the longest attempt timeout, so that the client never holds a
   * request back; a smaller cap makes attempts wait for a connection, and that wait is
   * reported (the open loop has turned partly closed). Connections are opened only when
   * every open one is busy, so a healthy run holds about as many as it has in flight.
   */
  readonly connections: number;
  readonly clock: Clock;
  /**
   * An idle connection is closed after this long (default 4 s), or 1 s before the
   * server's own `Keep-Alive: timeout=` when that is shorter, so that a request is not
   * written into a socket the server is closing.
   */
  readonly keepAliveMs?: number;
}

/** Hands a waiting attempt a connection (`null`: the transport closed); false when that attempt already gave up. */
type Waiter = (c: Connection | null) => boolean;

const CONNECT_TIMEOUT_MS = 60_000;
const EMPTY: readonly string[] = [];

/**
 * HTTP/1.1 with keep-alive over plain sockets, one request per connection at a time,
 * responses parsed by http-parser-js (as autocannon does). This is the load generator's
 * hot path, so it is ours: a free connection is found in O(1) (a stack, most recently
 * used first), a request is one string and one write, and nothing is allocated per
 * request beyond its promise and result. Attempts beyond the connection cap wait here,
 * in FIFO order, and report how long.
 */
export class HttpTransport implements Transport {
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly clock: Clock;
  private readonly cap: number;
  /** Open connections, busy or idle. */
  private open = 0;
  /** Connections holding an attempt. */
  private busy = 0;
  /** Idle connections, oldest first; the last is reused first. */
  private readonly idle: Connection[] = [];
  private readonly waiting: Waiter[] = [];
  private waitHead = 0;
  private closed = false;
  /** Every connection not yet closed, for close() to wait on. */
  readonly all = new Set<Connection>();
  private onEmpty: (() => void) | undefined;
  keepAliveMs: number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(opts: HttpTransportOptions) {
    const u = new URL(opts.url);
    if (u.protocol !== 'http:')
      throw new Error(`HttpTransport speaks http:, not ${u.protocol} (${opts.url})`);
    this.host = u.hostname.replace(/^\[|\]$/g, '');
    this.port = Number(u.port || 80);
    this.hostHeader = u.host;
    this.cap = opts.connections;
    this.clock = opts.clock;
    this.method = opts.method ?? 'GET';
    this.path = opts.path ?? '/work';
    this.keepAliveMs = opts.keepAliveMs ?? 4000;
    // One timer for every idle connection, not one per idle spell.
    // eslint-disable-next-line no-restricted-globals -- sockets idle in real time, whatever clock times the attempts
    this.sweeper = setInterval(() => this.closeStale(), 500);
    this.sweeper.unref();
  }

  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
  ): Promise<TransportResult> {
    if (this.closed || signal.aborted)
      return Promise.resolve({ kind: 'timeout', status: 0, clientWaitMs: 0 });
    const conn = this.idle.pop() ?? (this.open < this.cap ? this.dial() : undefined);
    if (conn) {
      this.busy++;
      return conn.request(attempt, headers, signal, 0);
    }
    return this.sendAfterWait(attempt, headers, signal);
  }

  private async sendAfterWait(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
  ): Promise<TransportResult> {
    const t0 = this.clock.now();
    const conn = await this.acquire(signal);
    const clientWaitMs = this.clock.now() - t0;
    if (!conn) return { kind: 'timeout', status: 0, clientWaitMs };
    return conn.request(attempt, headers, signal, clientWaitMs);
  }

  /**
   * Waits for a free connection. An aborted waiter stays in the queue as a no-op (O(1)):
   * thousands of waiters time out at once in a collapse, and searching the queue for
   * each would starve the generator.
   */
  private acquire(signal: AbortSignalLike): Promise<Connection | null> {
    return new Promise((resolve) => {
      let done = false;
      const onAbort = (): void => {
        if (done) return;
        done = true;
        resolve(null);
      };
      this.waiting.push((c) => {
        if (done) return false;
        done = true;
        signal.removeEventListener('abort', onAbort);
        if (c) this.busy++;
        resolve(c);
        return true;
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private nextWaiter(): Waiter | undefined {
    while (this.waitHead < this.waiting.length) {
      const w = this.waiting[this.waitHead++]!;
      if (this.waitHead > 1024 && this.waitHead * 2 > this.waiting.length) {
        this.waiting.splice(0, this.waitHead);
        this.waitHead = 0;
      }
      return w;
    }
    return undefined;
  }

  /** A connection finished its attempt and can carry another. */
  released(c: Connection): void {
    this.busy--;
    for (let w = this.nextWaiter(); w; w = this.nextWaiter()) if (w(c)) return;
    c.idleSinceMs = this.clock.now();
    this.idle.push(c);
  }

  /** A connection is gone (closed, failed, aborted mid-answer). */
  lost(c: Connection, wasBusy: boolean): void {
    this.open--;
    if (wasBusy) this.busy--;
    else {
      const i = this.idle.indexOf(c);
      if (i >= 0) this.idle.splice(i, 1);
    }
    // A waiter that could have had this connection gets a new one.
    if (this.closed || this.waitHead >= this.waiting.length) return;
    const fresh = this.dial();
    for (let w = this.nextWaiter(); w; w = this.nextWaiter()) if (w(fresh)) return;
    fresh.idleSinceMs = this.clock.now();
    this.idle.push(fresh);
  }

  /** A connection's socket has closed. */
  closedSocket(c: Connection): void {
    this.all.delete(c);
    if (this.all.size === 0) this.onEmpty?.();
  }

  private dial(): Connection {
    this.open++;
    const c = new Connection(this, connect({ host: this.host, port: this.port, noDelay: true }));
    this.all.add(c);
    return c;
  }

  /** Closes idle connections older than the keep-alive (the front of the stack is the oldest). */
  private closeStale(): void {
    const limit = this.clock.now() - this.keepAliveMs;
    while (this.idle.length > 0 && this.idle[0]!.idleSinceMs <= limit) this.idle[0]!.destroy();
  }

  /** The request line and headers of an attempt (the body, if any, follows). */
  head(attempt: Attempt, headers: Record<string, string> | undefined, bodyBytes: number): string {
    const req = attempt.origin.request;
    const method = req?.method ?? this.method;
    let s = `${method} ${req?.path ?? this.path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\nx-origin-id: ${attempt.origin.id}\r\nx-attempt: ${attempt.number}\r\n`;
    if (headers) for (const k in headers) s += `${k}: ${headers[k]}\r\n`;
    if (bodyBytes > 0 || method !== 'GET') s += `content-length: ${bodyBytes}\r\n`;
    return s + '\r\n';
  }

  /**
   * Opens up to `n` idle connections (never beyond the cap) and waits until they are
   * connected: a run opens what it will need before its schedule starts, so that its
   * first second does not pay for the handshakes (and fall behind because of them).
   */
  async prepare(n: number): Promise<void> {
    const fresh: Connection[] = [];
    while (this.open < Math.min(n, this.cap)) fresh.push(this.dial());
    await Promise.all(fresh.map((c) => c.connected));
    const now = this.clock.now();
    for (const c of fresh)
      if (!c.isDead) {
        c.idleSinceMs = now;
        this.idle.push(c);
      }
  }

  /** Attempts on the wire now (each holds a connection). */
  get openConnections(): number {
    return this.busy;
  }

  /** Connections open now, busy or idle. */
  get sockets(): number {
    return this.open;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    for (let w = this.nextWaiter(); w; w = this.nextWaiter()) w(null);
    for (const c of this.all) c.destroy();
    if (this.all.size > 0) await new Promise<void>((resolve) => (this.onEmpty = resolve));
  }
}

/**
 * One keep-alive connection and the attempt it carries. Its state lives on the object
 * (one attempt at a time), and it is itself the abort listener (handleEvent), so an
 * attempt costs no closures here.
 */
class Connection {
  private readonly parser = new HTTPParser(HTTPParser.RESPONSE);
  idleSinceMs = 0;
  private dead = false;
  /** Settles when the handshake is done (or the socket is gone). */
  readonly connected: Promise<void>;
  /** From request() until the connection is handed back or lost (counted in the transport's busy). */
  private holding = false;
  private resolve: ((r: TransportResult) => void) | null = null;
  private signal: AbortSignalLike | null = null;
  private clientWaitMs = 0;
  private status = 0;
  private headers: readonly string[] = EMPTY;
  private keepAlive = true;
  private meter: SseMeter | null = null;
  private cancelAfterTokens = Infinity;
  private sentMs = 0;

  constructor(
    private readonly t: HttpTransport,
    private readonly socket: Socket,
  ) {
    const p = this.parser;
    p[HTTPParser.kOnHeadersComplete] = (info) =>
      this.onHeaders(info.statusCode, info.headers, info.shouldKeepAlive);
    p[HTTPParser.kOnBody] = (chunk, offset, length) => this.onBody(chunk, offset, length);
    p[HTTPParser.kOnMessageComplete] = () => this.onComplete();
    socket.setTimeout(CONNECT_TIMEOUT_MS);
    this.connected = new Promise<void>((resolve) => {
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve();
      });
      socket.once('close', () => resolve());
    });
    socket.on('timeout', () => this.fail('timeout'));
    socket.on('data', (d: Buffer) => {
      const r = this.parser.execute(d);
      if (r instanceof Error) this.fail('conn-error');
    });
    // The server closed its side: a body that runs to the end of the stream ends here.
    socket.on('end', () => {
      if (this.resolve) this.parser.finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(kindOfSocketError(err.code)));
    socket.on('close', () => {
      this.fail('conn-reset');
      t.closedSocket(this);
    });
  }

  request(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
    clientWaitMs: number,
  ): Promise<TransportResult> {
    const req = attempt.origin.request;
    const body = req?.body;
    this.status = 0;
    this.headers = EMPTY;
    this.keepAlive = true;
    this.meter = null;
    this.cancelAfterTokens = req?.cancelAfterTokens ?? Infinity;
    this.clientWaitMs = clientWaitMs;
    this.signal = signal;
    this.holding = true;
    this.sentMs = this.t.clock.now();
    const p = new Promise<TransportResult>((resolve) => (this.resolve = resolve));
    signal.addEventListener('abort', this, { once: true });
    const head = this.t.head(attempt, headers, body?.length ?? 0);
    if (body && body.length > 0) {
      this.socket.cork();
      this.socket.write(head, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
    } else this.socket.write(head, 'latin1');
    return p;
  }

  /** The attempt's signal aborted: the answer will not be read, so the connection goes. */
  handleEvent(): void {
    this.settle({ kind: 'timeout', status: 0, clientWaitMs: this.clientWaitMs, ...this.streamPart() });
    this.destroy();
  }

  private onHeaders(status: number, headers: string[], keepAlive: boolean): void {
    this.status = status;
    this.headers = headers;
    this.keepAlive = keepAlive;
    if (status === 200 && this.header('content-type')?.startsWith('text/event-stream'))
      this.meter = new SseMeter(this.t.clock, this.sentMs);
  }

  private onBody(chunk: Buffer, offset: number, length: number): void {
    if (!this.meter) return;
    if (this.meter.push(chunk.subarray(offset, offset + length)) >= this.cancelAfterTokens) {
      // The user stopped reading: the rest of the answer is not wanted.
      this.settle({
        kind: 'abandoned',
        status: this.status,
        clientWaitMs: this.clientWaitMs,
        ...this.streamPart(),
      });
      this.destroy();
    }
  }

  private onComplete(): void {
    if (!this.resolve) return;
    const status = this.status;
    const clientWaitMs = this.clientWaitMs;
    let r: TransportResult;
    if (this.meter) {
      const stream = this.meter.result();
      // Ended without [DONE]: the answer was cut short, whatever the status said.
      r = { kind: stream.done ? 'ok' : 'conn-error', status, clientWaitMs, stream };
    } else if (status === 429 || status === 503) {
      const kind = status === 503 && this.header('x-shed') !== undefined ? 'shed' : kindOfStatus(status);
      const retryAfterMs = parseRetryAfter(this.header('retry-after'), this.header('date'));
      r =
        retryAfterMs === undefined
          ? { kind, status, clientWaitMs }
          : { kind, status, clientWaitMs, retryAfterMs };
    } else r = { kind: kindOfStatus(status), status, clientWaitMs };
    const hint = this.keepAlive ? this.header('keep-alive') : undefined;
    if (hint) {
      const m = /timeout=(\d+)/i.exec(hint);
      if (m) this.t.keepAliveMs = Math.min(this.t.keepAliveMs, Math.max(0, Number(m[1]) * 1000 - 1000));
    }
    this.settle(r);
    if (this.keepAlive && !this.dead) {
      this.holding = false;
      this.t.released(this);
    } else this.destroy();
  }

  private settle(r: TransportResult): void {
    const resolve = this.resolve;
    if (!resolve) return;
    this.resolve = null;
    this.signal?.removeEventListener('abort', this);
    this.signal = null;
    resolve(r);
  }

  private streamPart(): { stream?: ReturnType<SseMeter['result']> } {
    return this.meter ? { stream: this.meter.result() } : {};
  }

  /** The socket failed or closed: the attempt it carried (if any) ends with `kind`. */
  private fail(kind: OutcomeKind): void {
    this.settle({ kind, status: 0, clientWaitMs: this.clientWaitMs, ...this.streamPart() });
    this.destroy();
  }

  /** Closes the connection; an attempt still on it ends as `conn-reset`. Tells the transport once. */
  destroy(): void {
    this.settle({ kind: 'conn-reset', status: 0, clientWaitMs: this.clientWaitMs, ...this.streamPart() });
    this.socket.destroy();
    if (this.dead) return;
    this.dead = true;
    const held = this.holding;
    this.holding = false;
    this.t.lost(this, held);
  }

  get isDead(): boolean {
    return this.dead;
  }

  /** A response header by lower-case name (the first, if repeated). */
  private header(name: string): string | undefined {
    const h = this.headers;
    for (let i = 0; i < h.length; i += 2)
      if (h[i]!.length === name.length && h[i]!.toLowerCase() === name) return h[i + 1];
    return undefined;
  }
}

/** Maps socket error codes onto failure kinds. */
export function kindOfSocketError(code: string | undefined): OutcomeKind {
  switch (code) {
    case 'ECONNREFUSED':
      return 'conn-refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'conn-reset';
    case 'ETIMEDOUT':
      return 'timeout';
    default:
      return 'conn-error';
  }
}
