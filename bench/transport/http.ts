import { Pool, errors as undiciErrors } from 'undici';
import type { Attempt, OutcomeKind } from '../outcome.js';
import { kindOfStatus } from '../outcome.js';
import type { Transport, TransportResult } from './Transport.js';

export interface HttpTransportOptions {
  /** Base URL, e.g. http://127.0.0.1:8080 */
  readonly url: string;
  readonly method?: string;
  readonly path?: string;
  /**
   * Most connections open at once. Sized from the peak attempt rate and the longest
   * attempt timeout so that the client itself never queues requests (which would turn
   * the open loop into a closed one).
   */
  readonly connections: number;
}

/** HTTP/1.1 over an undici Pool with keep-alive; one request per connection at a time. */
export class HttpTransport implements Transport {
  private readonly pool: Pool;
  private readonly method: 'GET' | 'POST';
  private readonly path: string;

  constructor(opts: HttpTransportOptions) {
    this.pool = new Pool(opts.url, {
      connections: opts.connections,
      pipelining: 1,
      // Our own per-attempt timeout governs; undici's would only add a second clock.
      headersTimeout: 0,
      bodyTimeout: 0,
      connectTimeout: 60_000,
      keepAliveTimeout: 4_000,
    });
    this.method = (opts.method ?? 'GET') as 'GET' | 'POST';
    this.path = opts.path ?? '/work';
  }

  async send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    try {
      const res = await this.pool.request({
        method: this.method,
        path: this.path,
        headers: {
          'x-origin-id': String(attempt.origin.id),
          'x-attempt': String(attempt.number),
          ...headers,
        },
        signal,
      });
      // Drain the body so the connection can be reused.
      await res.body.dump({ signal, limit: 1 << 20 });
      const shed = res.statusCode === 503 && res.headers['x-shed'] !== undefined;
      const kind = shed ? 'shed' : kindOfStatus(res.statusCode);
      if (res.statusCode === 429 || res.statusCode === 503) {
        const retryAfterMs = parseRetryAfter(header(res.headers['retry-after']), header(res.headers['date']));
        if (retryAfterMs !== undefined) return { kind, status: res.statusCode, retryAfterMs };
      }
      return { kind, status: res.statusCode };
    } catch (err) {
      return { kind: classifyError(err), status: 0 };
    }
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
