import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import { connect, type Socket } from 'node:net';
import type { Clock } from '../../foundation/clock.js';
import { FifoQueue } from '../../foundation/fifoQueue.js';
import type { Attempt, OutcomeKind } from '../outcome.js';
import { kindOfStatus } from '../outcome.js';
import { parseRetryAfter } from '../../foundation/retryAfter.js';
import { SseMeter } from './sse.js';
import { ResponseParser, type ResponseSink } from './responseParser.js';
import type { Transport, TransportResult } from './Transport.js';
import type { DispatchTransport, InFlight, TransportHandler } from '../policy/dispatch.js';

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

/** How long a connect may take before the attempt fails (the simulated transport uses it too). */
export const CONNECT_TIMEOUT_MS = 60_000;
/** An idle connection is closed after this long (keepAliveMs's default; the simulated transport's too). */
export const KEEP_ALIVE_MS = 4000;
/** Where every connection's socket reads into (see Connection). */
const READ_BUFFER = Buffer.allocUnsafe(64 * 1024);

/**
 * HTTP/1.1 with keep-alive over plain sockets, one request per connection at a time,
 * responses parsed in place (responseParser.ts). This is the load generator's
 * hot path, so it is ours, and it dispatches natively (bench/policy/dispatch.ts): an
 * attempt is one small `Exchange` object, no promise, no closure and no abort listener; a
 * free connection is found in O(1) (a stack, most recently used first), a request is one
 * string (its constant part built once) and one write. Attempts beyond the connection cap
 * wait here, in FIFO order, and report how long.
 */
export class HttpTransport implements Transport, DispatchTransport {
  private readonly host: string;
  private readonly port: number;
  private readonly hostHeader: string;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  readonly clock: Clock;
  private readonly cap: number;
  /** The default request's line and host header, up to the origin id's value. */
  private readonly defaultHead: string;
  /** Open connections, busy or idle. */
  private open = 0;
  /** Connections holding an attempt. */
  private busy = 0;
  /** Idle connections, oldest first; the last is reused first. */
  private readonly idle: Connection[] = [];
  /** Attempts waiting for a connection; one that gave up stays queued as a no-op (O(1) abort). */
  private readonly waiting = new FifoQueue<Exchange>();
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
    this.defaultHead = this.headPrefix(this.method, this.path);
    this.keepAliveMs = opts.keepAliveMs ?? KEEP_ALIVE_MS;
    // One timer for every idle connection, not one per idle spell.
    // eslint-disable-next-line no-restricted-globals -- sockets idle in real time, whatever clock times the attempts
    this.sweeper = setInterval(() => this.closeStale(), 500);
    this.sweeper.unref();
  }

  /**
   * Starts one attempt: on an idle connection, a new one (below the cap), or after a wait
   * for one. `handler.onResult` is called exactly once, synchronously only when the
   * transport is closed.
   */
  dispatch(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: TransportHandler,
  ): InFlight {
    const x = new Exchange(this, attempt, headers, handler);
    if (this.closed) {
      x.answer({ kind: 'timeout', status: 0, clientWaitMs: 0 });
      return x;
    }
    const conn = this.idle.pop() ?? (this.open < this.cap ? this.dial() : undefined);
    if (conn) {
      this.busy++;
      conn.request(x);
    } else {
      x.queuedMs = this.clock.now();
      this.waiting.push(x);
    }
    return x;
  }

  /** The promise form of dispatch; `signal` aborts the attempt. Never rejects. */
  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
  ): Promise<TransportResult> {
    if (this.closed || signal.aborted)
      return Promise.resolve({ kind: 'timeout', status: 0, clientWaitMs: 0 });
    return new Promise((resolve) => new SignalledSend(resolve, signal).start(this, attempt, headers));
  }

  /** A connection finished its attempt and can carry another: the oldest live waiter's, or it idles. */
  released(c: Connection): void {
    this.busy--;
    for (let x = this.waiting.pop(); x; x = this.waiting.pop())
      if (x.waiting()) {
        this.busy++;
        c.request(x);
        return;
      }
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
    if (this.closed || this.waiting.length === 0) return;
    this.busy++;
    this.released(this.dial());
  }

  /** A connection's socket has closed. */
  closedSocket(c: Connection): void {
    this.all.delete(c);
    if (this.all.size === 0) this.onEmpty?.();
  }

  private dial(): Connection {
    this.open++;
    const c = new Connection(this, this.host, this.port);
    this.all.add(c);
    return c;
  }

  /** Closes idle connections older than the keep-alive (the front of the stack is the oldest). */
  private closeStale(): void {
    const limit = this.clock.now() - this.keepAliveMs;
    while (this.idle.length > 0 && this.idle[0]!.idleSinceMs <= limit) this.idle[0]!.destroy();
  }

  private headPrefix(method: string, path: string): string {
    return `${method} ${path} HTTP/1.1\r\nhost: ${this.hostHeader}\r\nx-origin-id: `;
  }

  /** The request line and headers of an attempt (the body, if any, follows). */
  head(attempt: Attempt, headers: Record<string, string> | undefined, bodyBytes: number): string {
    const req = attempt.origin.request;
    const method = req?.method ?? this.method;
    let s =
      (req ? this.headPrefix(method, req.path ?? this.path) : this.defaultHead) +
      attempt.origin.id +
      '\r\nx-attempt: ' +
      attempt.number +
      '\r\n';
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
    for (let x = this.waiting.pop(); x; x = this.waiting.pop()) x.giveUp();
    for (const c of this.all) c.destroy();
    if (this.all.size > 0) await new Promise<void>((resolve) => (this.onEmpty = resolve));
  }
}

/**
 * One attempt through the transport, from dispatch to its one answer: waiting for a
 * connection (`conn` null), on the wire (`conn` set) or settled (`handler` null). It is
 * the attempt's InFlight; aborting it after it settled does nothing, even if its
 * connection has since carried another attempt.
 */
class Exchange implements InFlight {
  conn: Connection | null = null;
  /** When it started waiting for a connection (transport clock). */
  queuedMs = 0;
  clientWaitMs = 0;

  constructor(
    private readonly t: HttpTransport,
    readonly attempt: Attempt,
    readonly headers: Record<string, string> | undefined,
    private handler: TransportHandler | null,
  ) {}

  /** Still waiting (taken off the queue now): stops the wait's clock. */
  waiting(): boolean {
    if (this.handler === null) return false;
    this.clientWaitMs = this.t.clock.now() - this.queuedMs;
    return true;
  }

  /** The transport closed while it waited. */
  giveUp(): void {
    if (this.waiting()) this.answer({ kind: 'timeout', status: 0, clientWaitMs: this.clientWaitMs });
  }

  abort(): void {
    if (this.handler === null) return;
    // On the wire: the answer will not be read, so the connection goes.
    if (this.conn) this.conn.abandon(this, 'timeout');
    else this.giveUp(); // still queued: stays there as a no-op
  }

  /** Settles, once; the caller has done its own bookkeeping first (re-entrancy: the handler may dispatch again). */
  answer(r: TransportResult): void {
    const h = this.handler;
    if (h === null) return;
    this.handler = null;
    this.conn = null;
    h.onResult(r);
  }
}

/** `send` over dispatch: the attempt's promise, aborted by a signal (it is its own listener). */
class SignalledSend implements TransportHandler {
  private inFlight: InFlight | null = null;
  private done = false;

  constructor(
    private readonly resolve: (r: TransportResult) => void,
    private readonly signal: AbortSignalLike,
  ) {}

  start(t: HttpTransport, attempt: Attempt, headers: Record<string, string> | undefined): void {
    this.inFlight = t.dispatch(attempt, headers, this);
    if (!this.done) this.signal.addEventListener('abort', this, { once: true });
  }

  onResult(r: TransportResult): void {
    this.done = true;
    if (this.inFlight) this.signal.removeEventListener('abort', this);
    this.resolve(r);
  }

  handleEvent(): void {
    this.inFlight?.abort();
  }
}

/**
 * One keep-alive connection and the attempt it carries. The response's state lives on the
 * connection (one attempt at a time); the parser's callbacks are bound once.
 */
class Connection implements ResponseSink {
  private readonly parser = new ResponseParser(this);
  idleSinceMs = 0;
  private dead = false;
  /** Settles when the handshake is done (or the socket is gone). */
  readonly connected: Promise<void>;
  /** The attempt on the wire; null between attempts. Counted in the transport's busy while set. */
  private current: Exchange | null = null;
  /** From request() until the connection is handed back or lost (counted in the transport's busy). */
  private holding = false;
  private status = 0;
  private keepAlive = true;
  private meter: SseMeter | null = null;
  private cancelAfterTokens = Infinity;
  private sentMs = 0;

  private readonly socket: Socket;

  constructor(
    private readonly t: HttpTransport,
    host: string,
    port: number,
  ) {
    // Responses are read into one buffer shared by every connection and parsed at once
    // (the parser copies what it keeps): no Buffer and no stream 'data' event per read.
    const socket = (this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: (n, buf) => this.onRead(n, buf) },
    }));
    socket.setTimeout(CONNECT_TIMEOUT_MS);
    this.connected = new Promise<void>((resolve) => {
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve();
      });
      socket.once('close', () => resolve());
    });
    socket.on('timeout', () => this.fail('timeout'));
    // The server closed its side: a body that runs to the end of the stream ends here.
    socket.on('end', () => {
      if (this.current) this.parser.finish();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(kindOfSocketError(err.code)));
    socket.on('close', () => {
      this.fail('conn-reset');
      t.closedSocket(this);
    });
  }

  private onRead(n: number, buf: Uint8Array): boolean {
    if (!this.parser.execute(buf as Buffer, 0, n)) this.fail('conn-error');
    return true;
  }

  /** Sends the exchange's request (the transport has counted this connection busy). */
  request(x: Exchange): void {
    const req = x.attempt.origin.request;
    const body = req?.body;
    this.status = 0;
    this.keepAlive = true;
    this.meter = null;
    this.cancelAfterTokens = req?.cancelAfterTokens ?? Infinity;
    this.current = x;
    x.conn = this;
    this.holding = true;
    this.sentMs = this.t.clock.now();
    const head = this.t.head(x.attempt, x.headers, body?.length ?? 0);
    if (body && body.length > 0) {
      this.socket.cork();
      this.socket.write(head, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
    } else this.socket.write(head, 'latin1');
  }

  /** Ends the attempt on this connection with `kind` (the caller gave up, or stopped reading) and closes it. */
  abandon(x: Exchange, kind: OutcomeKind): void {
    if (this.current !== x) return;
    const r: TransportResult = {
      kind,
      status: kind === 'abandoned' ? this.status : 0,
      clientWaitMs: x.clientWaitMs,
      ...this.streamPart(),
    };
    this.current = null;
    this.destroy();
    x.answer(r);
  }

  onHead(status: number, keepAlive: boolean, eventStream: boolean): void {
    this.status = status;
    this.keepAlive = keepAlive;
    if (status === 200 && eventStream) this.meter = new SseMeter(this.t.clock, this.sentMs);
  }

  onBody(buf: Buffer, start: number, end: number): void {
    if (!this.meter || !this.current) return;
    // The user stopped reading: the rest of the answer is not wanted.
    if (this.meter.push(buf.subarray(start, end)) >= this.cancelAfterTokens)
      this.abandon(this.current, 'abandoned');
  }

  onComplete(): void {
    const x = this.current;
    if (!x) return;
    const status = this.status;
    const clientWaitMs = x.clientWaitMs;
    let r: TransportResult;
    if (this.meter) {
      const stream = this.meter.result();
      // Ended without [DONE]: the answer was cut short, whatever the status said.
      r = { kind: stream.done ? 'ok' : 'conn-error', status, clientWaitMs, stream };
    } else if (status === 429 || status === 503) {
      const kind = status === 503 && this.parser.shed ? 'shed' : kindOfStatus(status);
      const retryAfterMs = parseRetryAfter(this.parser.retryAfter, this.parser.date);
      r =
        retryAfterMs === undefined
          ? { kind, status, clientWaitMs }
          : { kind, status, clientWaitMs, retryAfterMs };
    } else r = { kind: kindOfStatus(status), status, clientWaitMs };
    const hint = this.keepAlive ? this.parser.keepAliveHint : undefined;
    if (hint) {
      const m = /timeout=(\d+)/i.exec(hint);
      if (m) this.t.keepAliveMs = Math.min(this.t.keepAliveMs, Math.max(0, Number(m[1]) * 1000 - 1000));
    }
    // The connection's bookkeeping first (it may go straight to a waiter), then the answer,
    // whose handler may dispatch again at once.
    this.current = null;
    if (this.keepAlive && !this.dead) {
      this.holding = false;
      this.t.released(this);
    } else this.destroy();
    x.answer(r);
  }

  private streamPart(): { stream?: ReturnType<SseMeter['result']> } {
    return this.meter ? { stream: this.meter.result() } : {};
  }

  /** The socket failed or closed: the attempt it carried (if any) ends with `kind`. */
  private fail(kind: OutcomeKind): void {
    const x = this.current;
    if (x) this.abandon(x, kind);
    else this.destroy();
  }

  /** Closes the connection; an attempt still on it ends as `conn-reset`. Tells the transport once. */
  destroy(): void {
    const x = this.current;
    if (x) {
      this.abandon(x, 'conn-reset');
      return;
    }
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
