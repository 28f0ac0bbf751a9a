import { setTimeout as sleep } from 'node:timers/promises';
import { Pool, type Dispatcher } from 'undici';
import type { Rng } from '../../foundation/rng.js';
import { parseRetryAfter } from '../../foundation/retryAfter.js';
import type { HostPort } from './readThrough.js';

/** The api's own retry policy toward the provider (not the load generator's). */
export interface UpstreamRetry {
  /** Tries in all, the first included (1: no retry). */
  readonly maxAttempts: number;
  /** Exponential backoff with full jitter: uniform(0, min(cap, base·2^(i-1))) before retry i. */
  readonly baseMs: number;
  readonly capMs: number;
}

export interface LlmUpstreamConfig {
  /** Where the provider is reached: the fault proxy's link in the lab. */
  readonly address: HostPort;
  readonly retry: UpstreamRetry;
  /** Per attempt: until the response headers (a stream) or the whole body (otherwise). */
  readonly timeoutMs: number;
}

/** How one upstream call ended, after its retries. */
export type UpstreamResult =
  | { readonly ok: true; readonly res: Dispatcher.ResponseData; readonly attempts: number }
  | {
      readonly ok: false;
      /** aborted: the caller cancelled it (its client went away). */
      readonly reason: 'status' | 'timeout' | 'connection' | 'aborted';
      readonly status: number;
      readonly attempts: number;
    };

export interface UpstreamEvents {
  /** A call begins (before its first attempt). */
  call(): void;
  /** Every attempt sent (the first and each retry). */
  attempt(retry: boolean): void;
  /** An attempt that was on the wire when the caller cancelled. */
  aborted(): void;
}

/**
 * The provider client of the api: POSTs JSON over a keep-alive pool, retrying
 * connection errors, timeouts, 429 and 5xx (never another 4xx) with the policy's
 * backoff, honouring Retry-After when longer. A successful response is handed over with
 * its body unread, so a stream can be piped through; the caller's signal cancels the
 * attempt in flight (the socket is closed, the provider sees the client go).
 */
export class LlmUpstream {
  private readonly pool: Pool;

  constructor(
    private readonly cfg: LlmUpstreamConfig,
    private readonly rng: Rng,
    private readonly events: UpstreamEvents,
  ) {
    this.pool = new Pool(`http://${cfg.address.host}:${cfg.address.port}`, {
      connections: 1024,
      pipelining: 1,
      headersTimeout: 0,
      bodyTimeout: 0,
      keepAliveTimeout: 4_000,
    });
  }

  /**
   * `wholeBody`: the per-attempt timeout also covers reading the body (which the result
   * then carries as `text`); otherwise it stops at the headers and the body is the caller's.
   */
  async post(
    path: string,
    body: unknown,
    signal: AbortSignal,
    wholeBody: boolean,
  ): Promise<UpstreamResult & { text?: string }> {
    const payload = JSON.stringify(body);
    const r = this.cfg.retry;
    let last: UpstreamResult = { ok: false, reason: 'connection', status: 0, attempts: 0 };
    this.events.call();
    for (let attempt = 1; attempt <= r.maxAttempts; attempt++) {
      if (signal.aborted) return { ok: false, reason: 'aborted', status: 0, attempts: attempt - 1 };
      this.events.attempt(attempt > 1);
      const ac = new AbortController();
      const onAbort = (): void => ac.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      const timer = setTimeout(() => ac.abort(), this.cfg.timeoutMs);
      let retryAfterMs: number | undefined;
      let handedOver = false;
      try {
        const res = await this.pool.request({
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json' },
          body: payload,
          signal: ac.signal,
        });
        if (res.statusCode === 200) {
          if (!wholeBody) {
            // From here the caller's signal is the body's only abort: keep it wired.
            handedOver = true;
            return { ok: true, res, attempts: attempt };
          }
          const text = await res.body.text();
          return { ok: true, res, attempts: attempt, text };
        }
        await res.body.dump().catch(() => undefined);
        last = { ok: false, reason: 'status', status: res.statusCode, attempts: attempt };
        if (!(res.statusCode === 429 || res.statusCode >= 500)) return last;
        retryAfterMs = parseRetryAfter(header(res.headers['retry-after']), header(res.headers['date']));
      } catch {
        if (signal.aborted) {
          this.events.aborted();
          return { ok: false, reason: 'aborted', status: 0, attempts: attempt };
        }
        last = {
          ok: false,
          reason: ac.signal.aborted ? 'timeout' : 'connection',
          status: 0,
          attempts: attempt,
        };
      } finally {
        clearTimeout(timer);
        if (!handedOver) signal.removeEventListener('abort', onAbort);
      }
      if (attempt === r.maxAttempts) break;
      const backoff = this.rng.next() * Math.min(r.capMs, r.baseMs * 2 ** (attempt - 1));
      const wait = Math.max(backoff, retryAfterMs ?? 0);
      try {
        await sleep(wait, undefined, { signal });
      } catch {
        return { ok: false, reason: 'aborted', status: 0, attempts: attempt };
      }
    }
    return last;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
