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

export interface SimTransportOptions {
  /** Most attempts on the wire at once, one per connection (the lab's connection cap). */
  readonly connections: number;
  /** The cost class (?cost=) of a request class, by class index. */
  readonly costOf?: (cls: number) => string | undefined;
  /** Give each attempt its drawKey (its origin and number), for an api drawing work by attempt (SimApiConfig.keyedWorkSeed). */
  readonly keyed?: boolean;
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
  sent = 0;

  constructor(
    private readonly clock: SimClock,
    private readonly api: SimApi,
    private readonly opts: SimTransportOptions,
  ) {
    api.onDied = () => {
      // The api's death closed every kept-alive connection.
      this.idle.drain();
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
    this.api.connect(req, this.takeIdle());
  }

  /** Takes a kept-alive connection if one is idle (true), else a new one will be opened. */
  private takeIdle(): boolean {
    const expired = this.clock.now() - KEEP_ALIVE_MS;
    while (this.idle.length > 0 && this.idle.peek()! < expired) this.idle.pop();
    return this.idle.popNewest() !== undefined;
  }

  /** An attempt ended: its connection goes back idle (`keep`) or is gone; its slot passes on. */
  ended(keep: boolean): void {
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
    this.t.ended(keep);
    resolve(this.waitMs > 0 ? { kind, status, clientWaitMs: this.waitMs } : { kind, status });
  }

  answer(status: number, shed?: string): void {
    this.finish(status === 503 && shed !== undefined ? 'shed' : kindOfStatus(status), status, true);
  }

  reset(): void {
    this.gone = true;
    this.finish('conn-reset', 0, false);
  }

  refuse(): void {
    this.gone = true;
    this.finish('conn-refused', 0, false);
  }

  connectTimedOut(): void {
    this.gone = true;
    this.finish('timeout', 0, false);
  }
}
