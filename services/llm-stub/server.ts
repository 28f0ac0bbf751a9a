import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chat } from './chatRoute.js';
import { embeddings, type EmbeddingsEndpoint } from './embeddingsRoute.js';
import { checkRates, decideFate, type FaultRates } from './faults.js';
import { createStubMetrics, type StubMetrics } from './metrics.js';
import type { Profile } from './profile.js';
import { RateWindow } from './rateWindow.js';
import { readJson, sendError, sendJson } from './respond.js';
import { stateRoute } from './stateRoute.js';
import type { Count, StubContext, StubState } from './stubContext.js';
import { errors } from './wire.js';

export interface LlmStubConfig {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly profile: Profile;
  readonly seed: number;
  readonly rates: FaultRates;
}

export interface LlmStub {
  readonly server: Server;
  readonly port: number;
  readonly state: Readonly<StubState>;
  readonly metrics: StubMetrics;
  close(): Promise<void>;
}

/** Header naming a request's key for its fault and latency draws (else its arrival number). */
export const KEY_HEADER = 'x-llm-stub-key';

type Endpoint = 'chat' | EmbeddingsEndpoint;
const ROUTES: Record<string, Endpoint> = {
  '/v1/chat/completions': 'chat',
  '/v1/embeddings': 'embeddings',
  '/api/embed': 'ollama_embed',
  '/api/embeddings': 'ollama_embeddings',
};

/**
 * A fake LLM provider speaking OpenAI's chat completions and embeddings (and Ollama's
 * embeddings) on loopback, no key required, with the profile's latency model and
 * seeded per-request faults. Also: GET /health, GET /metrics, GET|PUT /_stub/state.
 */
export async function startLlmStub(cfg: LlmStubConfig): Promise<LlmStub> {
  const problem = checkRates(cfg.rates);
  if (problem) throw new Error(`fault rates: ${problem}`);
  const p = cfg.profile;
  const metrics = createStubMetrics();
  const state: StubState = { down: false, slowFactor: 1, rates: { ...cfg.rates } };
  const ctx: StubContext = {
    seed: cfg.seed,
    profile: p,
    state,
    metrics,
    window: new RateWindow(p.rateLimits.requestsPerMinute, p.rateLimits.tokensPerMinute),
  };
  let arrivals = 0;

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const endpoint = req.method === 'POST' ? ROUTES[path] : undefined;
    if (endpoint) return void modelRequest(endpoint, req, res);
    if (path === '/metrics' && req.method === 'GET')
      return void metrics.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text);
      });
    if (path === '/_stub/state') return void stateRoute(state, req, res);
    if (path === '/health' && req.method === 'GET') {
      if (state.down === 'reset') return void req.socket.destroy();
      return void sendJson(res, state.down ? 503 : 200, { ok: !state.down });
    }
    req.resume();
    sendJson(res, 404, errors.notFound(req.method ?? 'GET', path));
  });

  async function modelRequest(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers[KEY_HEADER];
    const key = typeof header === 'string' && header !== '' ? header : `#${arrivals}`;
    arrivals++;
    // Echoed, so a client can match what it saw with the stub's per-key draws.
    res.setHeader(KEY_HEADER, key);
    // One outcome a request: the first (a client gone while its body was read is not also a bad request).
    let counted = false;
    const count: Count = (outcome) => {
      if (counted) return;
      counted = true;
      metrics.requests.inc({ endpoint, outcome });
    };
    if (state.down === 'reset') {
      count('down');
      return void req.socket.destroy();
    }
    metrics.inFlight.inc({ endpoint });
    res.once('close', () => {
      metrics.inFlight.dec({ endpoint });
      // Closed before its answer ended (waited for, or being streamed): the client left,
      // e.g. an api that cancelled the call at its request's deadline.
      if (!counted) count('client_gone');
    });
    const body = await readJson(req);
    const ollama = endpoint === 'ollama_embed' || endpoint === 'ollama_embeddings';
    if (state.down === 'unavailable') {
      count('down');
      return ollama
        ? sendJson(res, 503, { error: 'server busy, please try again.  maximum pending requests exceeded' })
        : sendError(res, 503, errors.unavailable());
    }
    if (!body.ok) {
      count('bad_request');
      return ollama
        ? sendJson(res, 400, { error: 'invalid character in JSON body' })
        : sendError(
            res,
            400,
            body.tooLarge ? errors.invalid('body', 'Request too large.') : errors.invalidJson(),
          );
    }
    const decision = decideFate(cfg.seed, key, state.rates);
    if (endpoint === 'chat') return chat(ctx, body.value, key, decision, res, count);
    return embeddings(ctx, endpoint, body.value, key, decision, res, count);
  }

  server.keepAliveTimeout = 5_000;
  // A hang is held open for as long as the client waits: no server-side timeout.
  server.requestTimeout = 0;
  server.headersTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: cfg.host, port: cfg.port, backlog: 511 }, () => resolve());
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    state,
    metrics,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
