import type { Attempt } from '../bench/outcome.js';
import { kindOfStatus, type OutcomeKind } from '../bench/outcome.js';
import { deadlineHeaderMs } from '../services/api/requestLimits.js';
import { KEEP_ALIVE_MS } from '../bench/transport/http.js';
import { FifoQueue } from '../foundation/fifoQueue.js';
import type { Transport, TransportResult } from '../bench/transport/Transport.js';
import type { SimApi, SimRequest } from './api.js';
import type { QueuedWork } from '../services/api/workHandler.js';
import type { SimClock } from './clock.js';
import { attemptKey } from './keyedRng.js';
import type { LinkConn, SimLink } from './link.js';

export interface SimTransportOptions {
  /** Most attempts on the wire at once, one per connection (the lab's connection cap). */
  readonly connections: number;
  /** The cost class (?cost=) of a request class, by class index. */
  readonly costOf?: (cls: number) => string | undefined;
  /** Give each attempt its drawKey (its origin and number), for an api drawing work by attempt (SimApiConfig.keyedWorkSeed). */
  readonly keyed?: boolean;
  /** The api link (the fault proxy between the clients and this api), when the run goes through it. */
  readonly link?: SimLink;
}

/** What an attempt's request and its reply weigh on the api link (only its bandwidth toxic reads them). */
export const HTTP_REQUEST_BYTES = 128;
export const HTTP_REPLY_BYTES = 160;

/** A client connection through the api link, and the attempt on it (none while it is idle). */
interface ClientConn {
  readonly conn: LinkConn;
  call: SimCall | undefined;
}

/**
 * The load generator's HTTP client (bench/transport/http.ts, over plain sockets) in the
 * simulation, with the same seam (Transport), so the client policies above it run
 * unchanged. Like the lab's: at most `connections` attempts on the wire, one per
 * connection; attempts beyond the cap wait in FIFO order and report how long; an
 * attempt the caller aborts (its timeout) settles at once as `timeout` and its
 * connection is destroyed, while the api, which cannot know, may still work on it.
 * A finished attempt leaves its connection idle (kept alive 4 s); the next attempt
 * reuses it, or opens a new one. The network itself adds no delay.
 *
 * Through the api link (`link`), each connection is one of the link's: the request crosses
 * it upstream before the api reads it and the reply downstream before the client has it,
 * with the link's toxics; a partitioned link refuses new connections; a connection the link
 * closes (partition, reset-peer) resets its attempt, and the api sees its client leave; an
 * api that refuses or resets behind the proxy resets the client's connection (the proxy
 * accepted it, then closed it).
 */
export class SimTransport implements Transport {
  /**
   * One simulated api server: N replicas are N of these under
   * bench/transport/replicas.ts's overReplicas (sim/runtime.ts), as the lab's HTTP
   * endpoints are, each with its own connections.
   */
  readonly replicas = 1;
  private active = 0;
  private readonly waiting = new FifoQueue<() => boolean>();
  /** When each idle kept-alive connection became idle, oldest first (the newest is reused first). */
  private readonly idle = new FifoQueue<number>();
  /** Through the api link: the idle connections, in step with `idle`. */
  private readonly idleConns = new FifoQueue<ClientConn>();
  sent = 0;

  constructor(
    private readonly clock: SimClock,
    private readonly api: SimApi,
    private readonly opts: SimTransportOptions,
  ) {
    api.onDied = () => {
      // The api's death closed every kept-alive connection.
      this.idle.drain();
      // Behind the proxy the api's side closed, and the proxy closes the clients' side.
      for (const cc of this.idleConns.drain()) this.opts.link!.release(cc.conn);
    };
  }

  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    if (signal.aborted) return Promise.resolve({ kind: 'timeout', status: 0 });
    if (this.active < this.opts.connections) {
      this.active++;
      return new Promise((resolve) => this.dispatch(attempt, headers, signal, 0, resolve));
    }
    const t0 = this.clock.now();
    return new Promise((resolve) => {
      let done = false;
      const onAbort = (): void => {
        if (done) return;
        done = true;
        resolve({ kind: 'timeout', status: 0, clientWaitMs: this.clock.now() - t0 });
      };
      this.waiting.push(() => {
        if (done) return false;
        done = true;
        signal.removeEventListener('abort', onAbort);
        this.dispatch(attempt, headers, signal, this.clock.now() - t0, resolve);
        return true;
      });
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  private dispatch(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
    waitMs: number,
    resolve: (r: TransportResult) => void,
  ): void {
    this.sent++;
    const req = new SimCall(this, attempt, headers, signal, waitMs, resolve);
    const link = this.opts.link;
    if (!link) return this.api.connect(req, this.takeIdle() !== undefined);
    // With the link, takeIdle gives its connections (never `true`).
    const idle = this.takeIdle() as ClientConn | undefined;
    const cc = idle ?? this.openConn(link);
    if (!cc) return req.refuse(); // the link is down: the proxy's port refuses
    cc.call = req;
    req.cc = cc;
    link.send(cc.conn, 'upstream', HTTP_REQUEST_BYTES, () => this.api.connect(req, idle !== undefined));
  }

  /** A new connection over the api link; whoever is on it hears when the link closes it. */
  private openConn(link: SimLink): ClientConn | undefined {
    const cc: ClientConn = { conn: undefined as unknown as LinkConn, call: undefined };
    const conn = link.connect(() => cc.call?.linkClosed());
    if (!conn) return undefined;
    (cc as { conn: LinkConn }).conn = conn;
    return cc;
  }

  /**
   * Takes a kept-alive connection if one is idle (its api-link connection, or true without
   * the link), else undefined: a new one will be opened.
   */
  private takeIdle(): ClientConn | true | undefined {
    const expired = this.clock.now() - KEEP_ALIVE_MS;
    const link = this.opts.link;
    while (this.idle.length > 0 && this.idle.peek()! < expired) {
      this.idle.pop();
      if (link) link.release(this.idleConns.pop()!.conn);
    }
    while (this.idle.popNewest() !== undefined) {
      if (!link) return true;
      const cc = this.idleConns.popNewest()!;
      if (cc.conn.open) return cc; // else the link closed it while idle: the client finds it gone
    }
    return undefined;
  }

  /** An attempt ended: its connection goes back idle (`keep`) or is gone; its slot passes on. */
  ended(keep: boolean, cc: ClientConn | undefined): void {
    if (cc) {
      cc.call = undefined;
      if (keep) this.idleConns.push(cc);
      else this.opts.link!.release(cc.conn);
    }
    if (keep) this.idle.push(this.clock.now());
    if (this.waiting.length > 0) {
      // The next waiter goes on as its own event: an api that answers at once (a shed, a
      // refusal) would otherwise pass slot after slot down one call stack.
      this.clock.timer(this.clock.now(), () => this.passSlot());
      return;
    }
    this.active--;
  }

  private passSlot(): void {
    for (let next = this.waiting.pop(); next; next = this.waiting.pop()) if (next()) return;
    this.active--;
  }

  /** The client destroyed `req`'s connection: the api learns it (the lab's api sees the socket close). */
  closed(req: SimRequest): void {
    this.api.clientClosed(req);
  }

  get link(): SimLink | undefined {
    return this.opts.link;
  }

  get keyed(): boolean {
    return this.opts.keyed === true;
  }

  costOf(cls: number): string | undefined {
    return this.opts.costOf?.(cls);
  }

  async close(): Promise<void> {}
}

/** One attempt on its connection: what the api answers it, or how the connection failed. */
class SimCall implements SimRequest {
  readonly route: string;
  readonly cost: string | undefined;
  readonly key: number | undefined;
  readonly deadlineHeaderMs: number | undefined;
  readonly drawKey: number | undefined;
  /** Its connection over the api link, when the run goes through it. */
  cc: ClientConn | undefined;
  gone = false;
  queued: QueuedWork | undefined;
  private settled = false;

  constructor(
    private readonly t: SimTransport,
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    private signal: AbortSignal | undefined,
    private readonly waitMs: number,
    private resolve: ((r: TransportResult) => void) | undefined,
  ) {
    const r = attempt.origin.request;
    if (r) {
      const q = r.path.indexOf('?');
      this.route = q < 0 ? r.path : r.path.slice(0, q);
      this.cost = t.costOf(r.cls);
      this.key = r.key;
    } else {
      this.route = '/work';
      this.cost = undefined;
      this.key = undefined;
    }
    this.deadlineHeaderMs = headers ? deadlineHeaderMs(headers) : undefined;
    this.drawKey = t.keyed ? attemptKey(attempt.origin.id, attempt.number) : undefined;
    signal!.addEventListener('abort', this, { once: true });
  }

  /** The caller gave up (its timeout): like the lab's transport, destroy the connection and settle. */
  handleEvent(): void {
    this.gone = true;
    this.finish('timeout', 0, false);
    this.t.closed(this);
  }

  private finish(kind: OutcomeKind, status: number, keep: boolean): void {
    if (this.settled) return;
    this.settled = true;
    if (!this.gone) this.signal!.removeEventListener('abort', this);
    const resolve = this.resolve!;
    // A collapsed api keeps the requests of clients long gone: let their promises go.
    this.signal = undefined;
    this.resolve = undefined;
    this.t.ended(keep, this.cc);
    resolve(this.waitMs > 0 ? { kind, status, clientWaitMs: this.waitMs } : { kind, status });
  }

  answer(status: number, shed?: string): void {
    const kind = status === 503 && shed !== undefined ? 'shed' : kindOfStatus(status);
    const cc = this.cc;
    if (!cc) return this.finish(kind, status, true);
    // The reply crosses the api link; a connection closed meanwhile never delivers it.
    this.t.link!.send(cc.conn, 'downstream', HTTP_REPLY_BYTES, () => this.finish(kind, status, true));
  }

  reset(): void {
    this.gone = true;
    this.finish('conn-reset', 0, false);
  }

  /** The api refused: directly, a refused connection; behind the api link, the proxy closes the one it accepted. */
  refuse(): void {
    this.gone = true;
    this.finish(this.cc ? 'conn-reset' : 'conn-refused', 0, false);
  }

  /** The api link closed this attempt's connection (partition, reset-peer): a reset, and the api sees its client leave. */
  linkClosed(): void {
    if (this.settled) return;
    this.cc = undefined; // the link released it already
    this.gone = true;
    this.finish('conn-reset', 0, false);
    this.t.closed(this);
  }

  connectTimedOut(): void {
    this.gone = true;
    this.finish('timeout', 0, false);
  }
}
