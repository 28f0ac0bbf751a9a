import type { Attempt, AttemptResult } from '../bench/outcome.js';
import { kindOfStatus, type OutcomeKind } from '../bench/outcome.js';
import type { Alarm, Clock } from '../foundation/clock.js';
import { deadlineHeaderMs } from '../services/api/requestLimits.js';
import { timedAttemptResult } from '../bench/policy/ClientPolicy.js';
import { KEEP_ALIVE_MS } from '../bench/transport/http.js';
import { FifoQueue } from '../foundation/fifoQueue.js';
import type { Transport, TransportResult } from '../bench/transport/Transport.js';
import type {
  AttemptDispatchTransport,
  AttemptHandler,
  DispatchTransport,
  InFlight,
  TransportHandler,
} from '../bench/policy/dispatch.js';
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
export class SimTransport implements Transport, DispatchTransport, AttemptDispatchTransport, Alarm {
  /**
   * One simulated api server: N replicas are N of these under
   * bench/transport/replicas.ts's overReplicas (sim/runtime.ts), as the lab's HTTP
   * endpoints are, each with its own connections.
   */
  readonly replicas = 1;
  private active = 0;
  private readonly waiting = new FifoQueue<SlotWaiter>();
  /** Results the api gave inside its current event, delivered when it is done (`deliver`). */
  private readonly outHandlers: (TransportHandler | AttemptHandler | undefined)[] = [];
  private readonly outResults: (TransportResult | AttemptResult | undefined)[] = [];
  /** Whether each is an attempt's own result (dispatchAttempt), for an AttemptHandler. */
  private readonly outTimed: boolean[] = [];
  /**
   * How many of the out arrays' entries are pending: the arrays keep their length (setting
   * an array's length is a call into the runtime, once an api event), entries are cleared.
   */
  private outN = 0;
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
    api.onTurnEnd = () => {
      if (this.outN > 0) this.flush();
    };
  }

  /** The promise form (the promise-based client policies): a dispatch whose abort is `signal`'s. */
  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    if (signal.aborted) return Promise.resolve({ kind: 'timeout', status: 0 });
    return new Promise((resolve) => new SignalledSend(this, attempt, headers, signal, resolve));
  }

  /**
   * Starts one attempt: on a free connection at once, else after the attempts before it
   * (FIFO). The handler hears exactly once; `abort()` is the caller giving up (its timeout).
   */
  dispatch(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: TransportHandler,
  ): InFlight {
    return this.open(attempt, headers, handler, undefined, 0);
  }

  /**
   * `dispatch` for the client's innermost layer (viaTransport): the handler hears the
   * attempt's result itself, timed by `clock` as viaTransport times a TransportResult.
   */
  dispatchAttempt(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: AttemptHandler,
    clock: Clock,
  ): InFlight {
    return this.open(attempt, headers, handler, clock, clock.now());
  }

  /** An attempt on a free connection, or in line for one; `timing` set: its handler hears an AttemptResult. */
  private open(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: TransportHandler | AttemptHandler,
    timing: Clock | undefined,
    calledMs: number,
  ): InFlight {
    if (this.active < this.opts.connections) {
      this.active++;
      return this.start(attempt, headers, 0, handler, timing, calledMs);
    }
    const w = new SlotWaiter(this, attempt, headers, handler, this.clock.now(), timing, calledMs);
    this.waiting.push(w);
    return w;
  }

  /** An attempt on its connection (it holds a slot): its request goes to the api. */
  start(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    waitMs: number,
    handler: TransportHandler | AttemptHandler,
    timing: Clock | undefined,
    calledMs: number,
  ): SimCall {
    this.sent++;
    const req = new SimCall(this, attempt, headers, waitMs, handler, timing, calledMs);
    const link = this.opts.link;
    if (!link) {
      this.api.connect(req, this.takeIdle() !== undefined);
      return req;
    }
    // With the link, takeIdle gives its connections (never `true`).
    const idle = this.takeIdle() as ClientConn | undefined;
    const cc = idle ?? this.openConn(link);
    if (!cc) {
      req.refuse(); // the link is down: the proxy's port refuses
      return req;
    }
    cc.call = req;
    req.cc = cc;
    link.send(cc.conn, 'upstream', HTTP_REQUEST_BYTES, () => this.api.connect(req, idle !== undefined));
    return req;
  }

  /**
   * Hands `result` to its client. Inside one of the api's own events the client hears
   * once that event is done: the api finishes its bookkeeping and takes its next job
   * first, as the lab's api does before the client's socket is read.
   */
  deliver(handler: TransportHandler, result: TransportResult): void {
    if (!this.api.inTurn) return handler.onResult(result);
    this.out(handler, result, false);
  }

  /** `deliver` for an attempt's own result (dispatchAttempt). */
  deliverAttempt(handler: AttemptHandler, result: AttemptResult): void {
    if (!this.api.inTurn) return handler.onResponse(result);
    this.out(handler, result, true);
  }

  private out(
    handler: TransportHandler | AttemptHandler,
    result: TransportResult | AttemptResult,
    timed: boolean,
  ): void {
    const i = this.outN++;
    this.outHandlers[i] = handler;
    this.outResults[i] = result;
    this.outTimed[i] = timed;
  }

  /** The api's event is done: its answers reach their clients, in the order given. */
  private flush(): void {
    const hs = this.outHandlers;
    const rs = this.outResults;
    const timed = this.outTimed;
    // What a handler adds meanwhile (were the api in a turn again) is delivered in this loop too.
    for (let i = 0; i < this.outN; i++) {
      const h = hs[i]!;
      const r = rs[i]!;
      // Cleared first: the handlers and results are not kept until the next event.
      hs[i] = undefined;
      rs[i] = undefined;
      if (timed[i]) (h as AttemptHandler).onResponse(r as AttemptResult);
      else (h as TransportHandler).onResult(r);
    }
    this.outN = 0;
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
      this.clock.alarm(this.clock.now(), this);
      return;
    }
    this.active--;
  }

  /** A slot passes on (an alarm: no closure, nor canceller, per attempt when the cap is reached). */
  onAlarm(): void {
    for (let next = this.waiting.pop(); next; next = this.waiting.pop()) if (next.take()) return;
    this.active--;
  }

  /** The client destroyed `req`'s connection: the api learns it (the lab's api sees the socket close). */
  closed(req: SimRequest): void {
    this.api.clientClosed(req);
  }

  now(): number {
    return this.clock.now();
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

/** An attempt waiting for a free connection (the connection cap): it starts when a slot passes to it. */
class SlotWaiter implements InFlight {
  private done = false;
  private call: SimCall | undefined;

  constructor(
    private readonly t: SimTransport,
    private readonly attempt: Attempt,
    private readonly headers: Record<string, string> | undefined,
    private readonly handler: TransportHandler | AttemptHandler,
    private readonly t0: number,
    private readonly timing: Clock | undefined,
    private readonly calledMs: number,
  ) {}

  /** A slot is free: starts the attempt (true), or false when its caller gave up meanwhile. */
  take(): boolean {
    if (this.done) return false;
    this.done = true;
    const waitMs = this.t.now() - this.t0;
    this.call = this.t.start(this.attempt, this.headers, waitMs, this.handler, this.timing, this.calledMs);
    return true;
  }

  abort(): void {
    if (this.call) return this.call.abort();
    if (this.done) return;
    this.done = true;
    const waitMs = this.t.now() - this.t0;
    const c = this.timing;
    if (c)
      (this.handler as AttemptHandler).onResponse(
        timedAttemptResult('timeout', 0, this.calledMs, waitMs, c.now(), this.attempt.number),
      );
    else (this.handler as TransportHandler).onResult({ kind: 'timeout', status: 0, clientWaitMs: waitMs });
  }
}

/** `send`'s promise over a dispatch: the signal aborts the attempt, the result settles the promise. */
class SignalledSend implements TransportHandler {
  private readonly inFlight: InFlight;
  private settled = false;

  constructor(
    t: SimTransport,
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    private readonly signal: AbortSignal,
    private readonly resolve: (r: TransportResult) => void,
  ) {
    this.inFlight = t.dispatch(attempt, headers, this);
    if (!this.settled) signal.addEventListener('abort', this, { once: true });
  }

  onResult(r: TransportResult): void {
    this.settled = true;
    this.signal.removeEventListener('abort', this);
    this.resolve(r);
  }

  handleEvent(): void {
    this.inFlight.abort();
  }
}

/** One attempt on its connection: what the api answers it, or how the connection failed. */
class SimCall implements SimRequest, InFlight {
  readonly route: string;
  readonly cost: string | undefined;
  readonly key: number | undefined;
  readonly deadlineHeaderMs: number | undefined;
  readonly drawKey: number | undefined;
  /** Its connection over the api link, when the run goes through it. */
  cc: ClientConn | undefined;
  gone = false;
  queued: QueuedWork | undefined;
  /** Its slot in the api's set of the requests it holds (sim/api.ts): set here, so every SimCall has one shape. */
  liveSlot = -1;
  private settled = false;

  /** The attempt's number, for its own result (dispatchAttempt). */
  private readonly number: number;

  constructor(
    private readonly t: SimTransport,
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    private readonly waitMs: number,
    private handler: TransportHandler | AttemptHandler | undefined,
    /** Set by dispatchAttempt: the clock the result is timed by, and when the attempt was given. */
    private readonly timing: Clock | undefined,
    private readonly calledMs: number,
  ) {
    this.number = attempt.number;
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
  }

  /**
   * The caller gave up (its timeout): like the lab's transport, destroy the connection and
   * settle. The api learns it before the client hears (as with the signal's listeners).
   */
  abort(): void {
    if (this.settled) return;
    this.gone = true;
    this.t.closed(this);
    this.finish('timeout', 0, false);
  }

  private finish(kind: OutcomeKind, status: number, keep: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const handler = this.handler!;
    // A collapsed api keeps the requests of clients long gone: let their handlers go.
    this.handler = undefined;
    this.t.ended(keep, this.cc);
    const c = this.timing;
    if (c)
      this.t.deliverAttempt(
        handler as AttemptHandler,
        timedAttemptResult(kind, status, this.calledMs, this.waitMs, c.now(), this.number),
      );
    else
      this.t.deliver(
        handler as TransportHandler,
        this.waitMs > 0 ? { kind, status, clientWaitMs: this.waitMs } : { kind, status },
      );
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
    this.t.closed(this);
    this.finish('conn-reset', 0, false);
  }

  connectTimedOut(): void {
    this.gone = true;
    this.finish('timeout', 0, false);
  }
}
