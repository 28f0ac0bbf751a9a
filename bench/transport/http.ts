import { Pool, errors as undiciErrors } from 'undici';
import type { Clock } from '../clock.js';
import type { Attempt, OutcomeKind } from '../outcome.js';
import { kindOfStatus } from '../outcome.js';
import { SseMeter, type StreamTiming } from './sse.js';
import type { Transport, TransportResult } from './Transport.js';

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
   * reported (the open loop has turned partly closed).
   */
  readonly connections: number;
  readonly clock: Clock;
}

/**
 * HTTP/1.1 over an undici Pool with keep-alive, one request per connection at a time.
 * Attempts beyond the connection cap wait here, in FIFO order, and report how long.
 */
export class HttpTransport implements Transport {
  private readonly pool: Pool;
  private readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  private readonly path: string;
  private readonly cap: number;
  private active = 0;
  private readonly waiting: (() => boolean)[] = [];
  private waitHead = 0;

  constructor(private readonly opts: HttpTransportOptions) {
    this.cap = opts.connections;
    this.pool = new Pool(opts.url, {
      connections: opts.connections,
      pipelining: 1,
      // Our own per-attempt timeout governs; undici's would only add a second clock.
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: 60_000,
      keepAliveTimeout: 4_000,
    });
    this.method = opts.method ?? 'GET';
    this.path = opts.path ?? '/work';
  }

  async send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    let clientWaitMs = 0;
    if (this.active >= this.cap) {
      const t0 = this.opts.clock.now();
      const got = await this.acquire(signal);
      clientWaitMs = this.opts.clock.now() - t0;
      if (!got) return { kind: 'timeout', status: 0, clientWaitMs };
    } else this.active++;
    let stream: StreamTiming | undefined;
    try {
      const req = attempt.origin.request;
      const sentMs = this.opts.clock.now();
      // A stream the user stops reading is cancelled from here, not by the caller's signal.
      const cancel = req?.cancelAfterTokens !== undefined ? new AbortController() : undefined;
      const res = await this.pool.request({
        method: req?.method ?? this.method,
        path: req?.path ?? this.path,
        headers: {
          'x-origin-id': String(attempt.origin.id),
          'x-attempt': String(attempt.number),
          ...headers,
        },
        body: req?.body ?? null,
        signal: cancel ? AbortSignal.any([signal, cancel.signal]) : signal,
      });
      if (res.statusCode === 200 && isEventStream(res.headers['content-type'])) {
        const meter = new SseMeter(this.opts.clock, sentMs);
        try {
          for await (const chunk of res.body) {
            if (meter.push(chunk as Buffer) >= (req?.cancelAfterTokens ?? Infinity)) {
              cancel!.abort();
              break;
            }
          }
        } catch (err) {
          stream = meter.result();
          throw err;
        }
        stream = meter.result();
        if (cancel?.signal.aborted && !signal.aborted)
          return { kind: 'abandoned', status: res.statusCode, clientWaitMs, stream };
        // Ended without [DONE]: the answer was cut short, whatever the status said.
        if (!stream.done) return { kind: 'conn-error', status: res.statusCode, clientWaitMs, stream };
        return { kind: 'ok', status: res.statusCode, clientWaitMs, stream };
      }
      // Drain the body so the connection can be reused.
      await res.body.dump({ signal, limit: 1 << 20 });
      const shed = res.statusCode === 503 && res.headers['x-shed'] !== undefined;
      const kind = shed ? 'shed' : kindOfStatus(res.statusCode);
      if (res.statusCode === 429 || res.statusCode === 503) {
        const retryAfterMs = parseRetryAfter(header(res.headers['retry-after']), header(res.headers['date']));
        if (retryAfterMs !== undefined) return { kind, status: res.statusCode, clientWaitMs, retryAfterMs };
      }
      return { kind, status: res.statusCode, clientWaitMs };
    } catch (err) {
      return { kind: classifyError(err), status: 0, clientWaitMs, ...(stream ? { stream } : {}) };
    } finally {
      this.release();
    }
  }

  /**
   * Waits for a free connection slot; false when `signal` aborted first. An aborted
   * waiter stays in the queue as a no-op (O(1)): thousands of waiters time out at once
   * in a collapse, and searching the queue for each would starve the generator.
   */
  private acquire(signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      let done = false;
      const grant = (): boolean => {
        if (done) return false;
        done = true;
        signal.removeEventListener('abort', onAbort);
        resolve(true);
        return true;
      };
      const onAbort = (): void => {
        if (done) return;
        done = true;
        resolve(false);
      };
      this.waiting.push(grant);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Passes the slot straight to the next live waiter (`active` unchanged), or frees it. */
  private release(): void {
    while (this.waitHead < this.waiting.length) {
      const next = this.waiting[this.waitHead++]!;
      if (this.waitHead > 1024 && this.waitHead * 2 > this.waiting.length) {
        this.waiting.splice(0, this.waitHead);
        this.waitHead = 0;
      }
      if (next()) return;
    }
    this.active--;
  }

  /** Attempts on the wire now (each holds a connection). */
  get openConnections(): number {
    return this.active;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}

/** Maps undici and socket errors onto failure kinds. */
export function classifyError(err: unknown): OutcomeKind {
  const code = (err as { code?: string } | null)?.code;
  if (err instanceof undiciErrors.RequestAbortedError || (err as Error | null)?.name === 'AbortError')
    return 'timeout';
  switch (code) {
    case 'ECONNREFUSED':
      return 'conn-refused';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'UND_ERR_SOCKET':
      return 'conn-reset';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'UND_ERR_HEADERS_TIMEOUT':
    case 'UND_ERR_BODY_TIMEOUT':
      return 'timeout';
    default:
      return 'conn-error';
  }
}

function isEventStream(v: string | string[] | undefined): boolean {
  return header(v)?.startsWith('text/event-stream') ?? false;
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/**
 * Retry-After (RFC 9110 §10.2.3) in ms: delay-seconds, or an HTTP-date. A date is taken
 * relative to the response's own Date header (both are the server's clock), so no wall
 * clock is read here; a date without a Date header is ignored. Undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | undefined, date: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  const now = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(at) || Number.isNaN(now)) return undefined;
  return Math.max(0, at - now);
}
