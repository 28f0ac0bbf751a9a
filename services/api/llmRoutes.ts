import type { Express, Request, Response } from 'express';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Rng } from '../../foundation/rng.js';
import { LlmUpstream, type LlmUpstreamConfig } from './llmUpstream.js';
import type { ApiMetrics } from './metrics.js';
import type { ReadThroughCache } from './readThrough.js';
import { deadlineHeaderMs, firstLimit, requestLimits, type LimitKind } from './requestLimits.js';
import type { RejectReason } from './shedding.js';
import { WorkerPool } from './workerPool.js';

export interface LlmRoutesConfig extends LlmUpstreamConfig {
  /** Requests that may use the provider at once (a run queue); more wait in its queue. */
  readonly slots: number;
  readonly model: string;
  readonly embeddingModel: string;
}

/** The api's own time limits, as /work honours them (server.ts's ApiConfig and Mitigations). */
export interface LlmTimeLimits {
  /** The server-side request timeout (ms from arrival, slot wait included); absent: none. */
  readonly requestTimeoutMs?: number | undefined;
  /** Honour x-deadline-ms (the deadlineDrop mitigation). */
  readonly deadlineDrop?: boolean | undefined;
}

type Route = 'chat' | 'agent' | 'retrieve' | 'ingest';

/** A request in its slot: the signal that cancels its provider calls, and the limit that will. */
interface InSlot {
  /** Aborts when the client goes away, or with the LimitKind when that limit passes. */
  readonly signal: AbortSignal;
  /** When the first of its limits passes (Infinity: none). */
  readonly limitAtMs: number;
  readonly limitKind: LimitKind | undefined;
}

/** The abort reason when the client went away (a limit aborts with its LimitKind). */
const CLIENT_GONE = 'client-gone';

function llmMetrics(registry: Registry, pool: WorkerPool) {
  return {
    // Unlabelled totals, for the per-second series (upstream amplification = attempts / calls).
    callsAll: new Counter({
      name: 'api_llm_calls_total',
      help: 'Provider calls the api began (one per step, whatever its retries).',
      registers: [registry],
    }),
    attemptsAll: new Counter({
      name: 'api_llm_attempts_total',
      help: 'Requests the api sent to the provider, retries included.',
      registers: [registry],
    }),
    attempts: new Counter({
      name: 'api_llm_upstream_attempts_total',
      help: 'Requests the api sent to the LLM provider, retries included, by route.',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    retries: new Counter({
      name: 'api_llm_upstream_retries_total',
      help: "Retries by the api's own policy toward the provider, by route.",
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    calls: new Counter({
      name: 'api_llm_upstream_calls_total',
      help: 'Provider calls the api wanted (one per step, whatever its retries), by route and result (ok, status, timeout, connection, cut, aborted: its client went away, request_timeout and deadline: the request ran out of time).',
      labelNames: ['route', 'result'] as const,
      registers: [registry],
    }),
    aborted: new Counter({
      name: 'api_llm_upstream_aborted_total',
      help: 'Provider calls in flight that the api cancelled: its client went away, or the request ran out of time (request timeout, x-deadline-ms).',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    abandoned: new Counter({
      name: 'api_client_abandoned_total',
      help: 'Requests whose client went away before the answer was complete, by route.',
      labelNames: ['route'] as const,
      registers: [registry],
    }),
    streams: new Gauge({
      name: 'api_llm_streams_open',
      help: 'Chat answers being streamed through to a client.',
      registers: [registry],
    }),
    slotsBusy: new Gauge({
      name: 'api_llm_slots_busy',
      help: 'Requests holding one of the provider slots.',
      registers: [registry],
      collect() {
        this.set(pool.busyWorkers);
      },
    }),
    slotQueue: new Gauge({
      name: 'api_llm_queue_depth',
      help: 'Requests waiting for a provider slot.',
      registers: [registry],
      collect() {
        this.set(pool.queueDepth);
      },
    }),
  };
}

/**
 * The api's routes that call the LLM provider (through its link), each holding a
 * provider slot for as long as it talks to the provider:
 *   POST /chat?prompt=N     a chat turn, streamed through to the client as it arrives
 *   POST /agent?steps=S     S chat calls one after the other (no stream), then a JSON answer
 *   GET  /retrieve?key=K    an embedding of the query, then a Postgres lookup of row K
 *                           (a primary-key lookup stands in for a vector search)
 *   POST /ingest            202 at once; the document is embedded afterwards (counted)
 * When the client goes away, the provider call in flight is cancelled and counted.
 *
 * Time limits as /work has them (requestLimits.ts): a request still waiting for a slot
 * when its request timeout or (with deadline dropping) its x-deadline-ms passes is
 * dropped unstarted when a slot frees (504, or 503 x-shed: deadline), and one in a slot
 * has its provider call cancelled when the limit passes (the provider sees its client go)
 * and gets the same answer; a stream already passed on is cut instead (its 200 is sent),
 * counted as that answer. /ingest has no limit: it is answered on arrival.
 */
export function registerLlmRoutes(
  app: Express,
  cfg: LlmRoutesConfig,
  api: ApiMetrics,
  registry: Registry,
  rng: Rng,
  cache: () => ReadThroughCache | undefined,
  limits: LlmTimeLimits = {},
): { close(): Promise<void> } {
  // Only the deadline is a pickup rule to switch on; the timeout is checked whenever a job carries one.
  const pool = new WorkerPool(cfg.slots, limits.deadlineDrop ? { deadlineDrop: true } : {});
  const m = llmMetrics(registry, pool);
  const upstreams = new Map<Route, LlmUpstream>();
  const upstream = (route: Route): LlmUpstream => {
    let u = upstreams.get(route);
    if (!u) {
      u = new LlmUpstream(cfg, rng, {
        call: () => m.callsAll.inc(),
        attempt: (retry) => {
          m.attemptsAll.inc();
          m.attempts.inc({ route });
          if (retry) m.retries.inc({ route });
        },
        aborted: () => m.aborted.inc({ route }),
      });
      upstreams.set(route, u);
    }
    return u;
  };

  const finish = (res: Response, status: number, body?: unknown, headers?: Record<string, string>): void => {
    api.completed.inc({ status: String(status) });
    if (res.socket?.destroyed || res.headersSent) return;
    if (headers) res.set(headers);
    if (body === undefined) res.status(status).end();
    else res.status(status).json(body);
  };
  const failed = (res: Response, r: { reason: string; status: number }): void =>
    finish(res, r.reason === 'timeout' ? 504 : 502, { error: `provider: ${r.reason}`, status: r.status });

  /**
   * A request that ran out of time, answered as /work answers it: its request timeout
   * 504 (counted timed out), its deadline 503 x-shed: deadline (the client records a
   * shed). A stream already passed on cannot change its status: it is cut.
   */
  const outOfTime = (res: Response, kind: LimitKind): void => {
    const streaming = res.headersSent;
    if (kind === 'timeout') {
      api.timedOut.inc();
      finish(res, 504, { error: 'server timeout' });
    } else finish(res, 503, { error: 'shed: deadline' }, { 'x-shed': 'deadline' });
    // A clean end would read as a whole answer to anyone not checking for [DONE].
    if (streaming) res.destroy();
  };
  /** Dropped unstarted at pickup (the pool's rules: the request timeout, deadline dropping). */
  const refused = (res: Response, reason: RejectReason): void => {
    if (reason === 'timeout') return outOfTime(res, 'timeout');
    api.rejected.inc({ reason });
    finish(res, 503, { error: `shed: ${reason}` }, { 'x-shed': reason });
  };
  /** A provider call the api cancelled: its client went away (nobody to answer), or a limit passed. */
  const cancelled = (route: Route, res: Response, signal: AbortSignal): void => {
    const why = signal.reason as unknown;
    if (why === 'timeout' || why === 'deadline') {
      m.calls.inc({ route, result: why === 'timeout' ? 'request_timeout' : 'deadline' });
      return outOfTime(res, why);
    }
    m.calls.inc({ route, result: 'aborted' });
    api.completed.inc({ status: '499' });
  };

  /**
   * Runs `work` in a provider slot, with a signal that aborts when the client goes away
   * or when the request's first limit passes (x-deadline-ms only with deadline dropping).
   */
  const inSlot = (route: Route, req: Request, res: Response, work: (s: InSlot) => Promise<void>) => {
    api.received.inc();
    const arrivedMs = performance.now();
    const l = requestLimits(arrivedMs, limits.requestTimeoutMs, deadlineHeaderMs(req.headers));
    const ac = new AbortController();
    res.once('close', () => {
      // Already aborted: the api cut it at a limit, the client did not leave.
      if (!res.writableFinished && !ac.signal.aborted) {
        m.abandoned.inc({ route });
        ac.abort(CLIENT_GONE);
      }
    });
    pool.submit({
      enqueuedMs: arrivedMs,
      timeoutAtMs: l.timeoutAtMs,
      deadlineMs: l.deadlineMs,
      reject: (reason) => refused(res, reason),
      run: async () => {
        if (ac.signal.aborted) return void api.completed.inc({ status: '499' });
        const first = firstLimit(l, limits.deadlineDrop === true);
        const timer = first
          ? setTimeout(() => ac.abort(first.kind), Math.max(0, first.atMs - performance.now()))
          : undefined;
        try {
          await work({ signal: ac.signal, limitAtMs: first?.atMs ?? Infinity, limitKind: first?.kind });
        } finally {
          clearTimeout(timer);
        }
      },
    });
  };

  const messages = (promptTokens: number): unknown[] => [
    { role: 'system', content: 'You are the metabench platform assistant.' },
    { role: 'user', content: 'q'.repeat(Math.max(1, promptTokens * 4 - 10)) },
  ];
  const intParam = (req: Request, name: string, dflt: number, max: number): number => {
    const v = Number(req.query[name] ?? dflt);
    return Number.isInteger(v) && v >= 0 && v <= max ? v : dflt;
  };

  app.post('/chat', (req, res) => {
    const prompt = intParam(req, 'prompt', 200, 100_000);
    inSlot('chat', req, res, async ({ signal }) => {
      const body = {
        model: cfg.model,
        messages: messages(prompt),
        stream: true,
        stream_options: { include_usage: true },
      };
      const r = await upstream('chat').post('/v1/chat/completions', body, signal, false);
      if (!r.ok) {
        if (r.reason === 'aborted') return cancelled('chat', res, signal);
        m.calls.inc({ route: 'chat', result: r.reason });
        return failed(res, r);
      }
      m.streams.inc();
      res
        .status(200)
        .set({ 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      res.flushHeaders();
      try {
        for await (const chunk of r.res.body) res.write(chunk as Buffer);
        m.calls.inc({ route: 'chat', result: 'ok' });
        finish(res, 200);
        res.end();
      } catch {
        if (signal.aborted) {
          m.aborted.inc({ route: 'chat' });
          cancelled('chat', res, signal);
        } else {
          // The provider cut the stream: so does the api (a clean end would hide it).
          m.calls.inc({ route: 'chat', result: 'cut' });
          api.completed.inc({ status: '502' });
          res.destroy();
        }
      } finally {
        m.streams.dec();
      }
    });
  });

  app.post('/agent', (req, res) => {
    const steps = Math.max(1, intParam(req, 'steps', 3, 20));
    const prompt = intParam(req, 'prompt', 400, 100_000);
    inSlot('agent', req, res, async ({ signal }) => {
      let tokens = 0;
      for (let s = 0; s < steps; s++) {
        const body = { model: cfg.model, messages: messages(prompt), max_tokens: 64 };
        const r = await upstream('agent').post('/v1/chat/completions', body, signal, true);
        if (!r.ok && r.reason === 'aborted') return cancelled('agent', res, signal);
        m.calls.inc({ route: 'agent', result: r.ok ? 'ok' : r.reason });
        if (!r.ok) return failed(res, r);
        tokens +=
          (JSON.parse(r.text ?? '{}') as { usage?: { completion_tokens?: number } }).usage
            ?.completion_tokens ?? 0;
      }
      finish(res, 200, { steps, tokens });
    });
  });

  app.get('/retrieve', (req, res) => {
    const key = intParam(req, 'key', 1, Number.MAX_SAFE_INTEGER);
    inSlot('retrieve', req, res, async ({ signal, limitAtMs, limitKind }) => {
      const body = { model: cfg.embeddingModel, input: `query ${key}`, encoding_format: 'base64' };
      const r = await upstream('retrieve').post('/v1/embeddings', body, signal, true);
      if (!r.ok && r.reason === 'aborted') return cancelled('retrieve', res, signal);
      m.calls.inc({ route: 'retrieve', result: r.ok ? 'ok' : r.reason });
      if (!r.ok) return failed(res, r);
      const db = cache();
      if (db) {
        // The query is cancelled at the request's limit too, as /work's lookup is.
        const leftMs = limitAtMs - performance.now();
        const got = await db.queryDbWithin(key, Math.min(cfg.timeoutMs, leftMs));
        if (got === 'timeout' && limitKind && leftMs <= cfg.timeoutMs) return outOfTime(res, limitKind);
        if (typeof got === 'string')
          return finish(res, got === 'timeout' ? 504 : 500, { error: `database: ${got}` });
      }
      finish(res, 200, { key, db: db !== undefined });
    });
  });

  app.post('/ingest', (req, res) => {
    api.received.inc();
    req.resume();
    finish(res, 202, { accepted: true });
    // Indexed afterwards, in a slot, whatever the client does next.
    const never = new AbortController().signal;
    pool.submit({
      enqueuedMs: performance.now(),
      reject: () => m.calls.inc({ route: 'ingest', result: 'rejected' }),
      run: async () => {
        const body = { model: cfg.embeddingModel, input: 'document', encoding_format: 'base64' };
        const r = await upstream('ingest').post('/v1/embeddings', body, never, true);
        m.calls.inc({ route: 'ingest', result: r.ok ? 'ok' : r.reason });
      },
    });
  });

  return { close: async () => void (await Promise.all([...upstreams.values()].map((u) => u.close()))) };
}
