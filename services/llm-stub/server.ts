import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { embedText, embeddingInputs } from './embeddings.js';
import { checkRates, decideFate, requestRng, type Decision, type FaultRates } from './faults.js';
import { embeddingMs, planResponse, type ResponsePlan } from './latency.js';
import { createStubMetrics, type StubMetrics } from './metrics.js';
import type { Profile } from './profile.js';
import { RateWindow } from './rateWindow.js';
import { answerTokens, promptTokens } from './tokens.js';
import { ChunkWriter, completion, errors, resetString, toBase64, usage, type ApiErrorBody } from './wire.js';

export interface LlmStubConfig {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly profile: Profile;
  readonly seed: number;
  readonly rates: FaultRates;
}

/** What can be switched while the stub runs (PUT /_stub/state), e.g. by a trigger. */
export interface StubState {
  /** The whole provider down: `reset` destroys every connection, `unavailable` answers 503. */
  down: false | 'reset' | 'unavailable';
  /** The whole provider slow: multiplies every TTFT, token gap, error delay and embedding time. */
  slowFactor: number;
  rates: FaultRates;
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

const MAX_BODY = 16 << 20;

const stateUpdate = z.strictObject({
  down: z.union([z.literal(false), z.enum(['reset', 'unavailable'])]).optional(),
  slowFactor: z.number().positive().max(1000).optional(),
  rates: z
    .strictObject({
      rateLimit: z.number().min(0).max(1).optional(),
      serverError: z.number().min(0).max(1).optional(),
      contextLength: z.number().min(0).max(1).optional(),
      cut: z.number().min(0).max(1).optional(),
      hang: z.number().min(0).max(1).optional(),
    })
    .optional(),
});

type Endpoint = 'chat' | 'embeddings' | 'ollama_embed' | 'ollama_embeddings';
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
  const window = new RateWindow(p.rateLimits.requestsPerMinute, p.rateLimits.tokensPerMinute);
  let arrivals = 0;

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const endpoint = req.method === 'POST' ? ROUTES[path] : undefined;
    if (endpoint) return void modelRequest(endpoint, req, res);
    if (path === '/metrics' && req.method === 'GET')
      return void metrics.registry.metrics().then((text) => {
        res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text);
      });
    if (path === '/_stub/state') return void adminState(req, res);
    if (path === '/health' && req.method === 'GET') {
      if (state.down === 'reset') return void req.socket.destroy();
      return void sendJson(res, state.down ? 503 : 200, { ok: !state.down });
    }
    drain(req);
    sendJson(res, 404, errors.notFound(req.method ?? 'GET', path));
  });

  async function adminState(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET') return sendJson(res, 200, state);
    if (req.method !== 'PUT' && req.method !== 'POST') return sendJson(res, 405, { error: 'GET or PUT' });
    const body = await readJson(req);
    const r = stateUpdate.safeParse(body.ok ? body.value : undefined);
    if (!r.success)
      return sendJson(res, 400, {
        error: r.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
      });
    const rates = { ...state.rates, ...definedOnly(r.data.rates ?? {}) } as FaultRates;
    const bad = checkRates(rates);
    if (bad) return sendJson(res, 400, { error: `rates: ${bad}` });
    if (r.data.down !== undefined) state.down = r.data.down;
    if (r.data.slowFactor !== undefined) state.slowFactor = r.data.slowFactor;
    state.rates = rates;
    sendJson(res, 200, state);
  }

  async function modelRequest(endpoint: Endpoint, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const header = req.headers[KEY_HEADER];
    const key = typeof header === 'string' && header !== '' ? header : `#${arrivals}`;
    arrivals++;
    // Echoed, so a client can match what it saw with the stub's per-key draws.
    res.setHeader(KEY_HEADER, key);
    const count = (outcome: string): void => metrics.requests.inc({ endpoint, outcome });
    if (state.down === 'reset') {
      count('down');
      return void req.socket.destroy();
    }
    metrics.inFlight.inc({ endpoint });
    res.once('close', () => metrics.inFlight.dec({ endpoint }));
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
    if (endpoint === 'chat') return chat(body.value, key, decision, res, count);
    return embeddings(endpoint, body.value, key, decision, res, count);
  }

  /** Standard headers of an OpenAI answer, with the rate-limit window after this request. */
  function openaiHeaders(processingMs: number): Record<string, string> {
    const w = window.snapshot(performance.now());
    return {
      'x-request-id': `req_${randomBytes(16).toString('hex')}`,
      'openai-organization': 'org-metabench',
      'openai-version': '2020-10-01',
      'openai-processing-ms': String(Math.round(processingMs)),
      'x-ratelimit-limit-requests': String(w.requestLimit),
      'x-ratelimit-limit-tokens': String(w.tokenLimit),
      'x-ratelimit-remaining-requests': String(w.requestsLeft),
      'x-ratelimit-remaining-tokens': String(w.tokensLeft),
      'x-ratelimit-reset-requests': resetString(w.resetMs),
      'x-ratelimit-reset-tokens': resetString(w.resetMs),
    };
  }

  /** An error after the network floor (a provider's errors are not instant), unless the client left. */
  function errorLater(
    res: ServerResponse,
    status: number,
    bodyOf: () => ApiErrorBody,
    extra: Record<string, string> = {},
  ): void {
    const t0 = performance.now();
    later(res, p.ttft.floor * state.slowFactor, () => {
      sendError(res, status, bodyOf(), { ...openaiHeaders(performance.now() - t0), ...extra });
    });
  }

  function rateLimited(
    res: ServerResponse,
    model: string,
    kind: 'requests' | 'tokens',
    retryMs: number,
    requested: number,
  ): void {
    const w = window.snapshot(performance.now());
    const limit = kind === 'tokens' ? w.tokenLimit : w.requestLimit;
    const used = kind === 'tokens' ? w.tokenLimit - w.tokensLeft : w.requestLimit - w.requestsLeft;
    errorLater(res, 429, () => errors.rateLimit(model, kind, limit, used, requested, resetString(retryMs)), {
      'retry-after': String(Math.ceil(retryMs / 1000)),
      'retry-after-ms': String(Math.round(retryMs)),
    });
  }

  /** The fates every endpoint shares; true when one of them answered. */
  function commonFault(
    d: Decision,
    res: ServerResponse,
    count: (o: string) => void,
    model: string,
    requested: number,
    ollama: boolean,
  ): boolean {
    if (d.fate === 'hang') {
      count('hang'); // held open until the client gives up or the stub stops
      return true;
    }
    if (d.fate === 'rate_limit') {
      count('rate_limited');
      if (ollama)
        later(res, p.ttft.floor * state.slowFactor, () =>
          sendJson(res, 503, { error: 'server busy, please try again.  maximum pending requests exceeded' }),
        );
      else rateLimited(res, model, 'tokens', p.rateLimits.retryAfter, requested);
      return true;
    }
    if (d.fate === 'server_error') {
      count('server_error');
      if (ollama)
        later(res, p.ttft.floor * state.slowFactor, () =>
          sendJson(res, 500, { error: 'llama runner process has terminated' }),
        );
      else errorLater(res, 500, errors.server);
      return true;
    }
    return false;
  }

  function chat(
    body: Record<string, unknown>,
    key: string,
    d: Decision,
    res: ServerResponse,
    count: (o: string) => void,
  ): void {
    const t0 = performance.now();
    const req = parseChat(body);
    if (typeof req === 'string' || 'error' in req) {
      count('bad_request');
      return sendError(res, 400, typeof req === 'string' ? errors.missing(req) : req);
    }
    const model = req.model;
    const prompt = promptTokens(req.messages);
    if (prompt + (req.maxTokens ?? 0) > p.contextWindow) {
      count('context_length');
      return errorLater(res, 400, () => errors.contextLength(p.contextWindow, prompt, req.maxTokens));
    }
    const plan = planResponse(
      p,
      { promptTokens: prompt, maxTokens: req.maxTokens, slowFactor: state.slowFactor },
      requestRng(cfg.seed, key, 'latency'),
    );
    const quota = window.admit(performance.now(), prompt + plan.outputTokens);
    if (quota) {
      count('rate_limited');
      return rateLimited(res, model, quota.kind, quota.retryMs, prompt + plan.outputTokens);
    }
    if (commonFault(d, res, count, model, prompt + plan.outputTokens, false)) return;
    if (d.fate === 'context_length') {
      count('context_length');
      return errorLater(res, 400, () => errors.contextLength(p.contextWindow, prompt, req.maxTokens));
    }
    const tokens = answerTokens(requestRng(cfg.seed, key, 'text'), plan.outputTokens);
    const env = {
      id: `chatcmpl-${randomBytes(15).toString('base64url')}`,
      created: Math.floor(Date.now() / 1000),
      model,
      systemFingerprint: p.systemFingerprint,
      includeUsage: req.includeUsage,
    };
    const cutAfter = d.fate === 'cut' ? Math.floor(d.cutAt * plan.outputTokens) : -1;
    if (req.stream) return stream(res, t0, plan, tokens, new ChunkWriter(env), prompt, cutAfter, count);
    const total = plan.ttftMs + plan.gapsMs.reduce((s, g) => s + g, 0);
    if (cutAfter >= 0) {
      count('cut');
      return later(res, total * d.cutAt, () => res.socket?.destroy());
    }
    later(res, total, () => {
      count('ok');
      metrics.outputTokens.inc(plan.outputTokens);
      sendJson(
        res,
        200,
        completion(env, tokens.join(''), plan.finishReason, usage(prompt, plan.outputTokens)),
        openaiHeaders(performance.now() - t0),
      );
    });
  }

  /** Paces the answer: role chunk and token 0 at TTFT, token i at TTFT + Σ gaps. */
  function stream(
    res: ServerResponse,
    t0: number,
    plan: ResponsePlan,
    tokens: readonly string[],
    w: ChunkWriter,
    prompt: number,
    cutAfter: number,
    count: (o: string) => void,
  ): void {
    metrics.streamsOpen.inc();
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    res.once('close', () => {
      metrics.streamsOpen.dec();
      clearTimeout(timer);
      if (!finished) count('client_gone');
    });
    let i = 0;
    let due = t0 + plan.ttftMs;
    let started = false;
    const step = (): void => {
      timer = undefined;
      if (res.destroyed) return;
      let out = '';
      if (!started) {
        // Token 0 is due at TTFT by definition (a timer may fire a little early).
        started = true;
        due = performance.now();
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          ...openaiHeaders(performance.now() - t0),
        });
        metrics.ttft.observe((performance.now() - t0) / 1000);
        out = w.role();
      }
      // Every token already due goes in this write (a late timer does not stretch the answer).
      const now = performance.now();
      while (i < tokens.length && due <= now + 0.5) {
        if (i === cutAfter) break;
        out += w.content(JSON.stringify(tokens[i]));
        if (i < plan.gapsMs.length) due += plan.gapsMs[i]!;
        i++;
      }
      if (i === cutAfter) {
        finished = true;
        count('cut');
        metrics.outputTokens.inc(i);
        // Written first, then the connection is destroyed: no finish chunk, no [DONE].
        res.write(out, () => res.socket?.destroy());
        return;
      }
      if (i === tokens.length) {
        out += w.finish(plan.finishReason);
        if (w.includesUsage) out += w.usage(usage(prompt, tokens.length));
        out += ChunkWriter.DONE;
        finished = true;
        count('ok');
        metrics.outputTokens.inc(tokens.length);
        res.end(out);
        return;
      }
      res.write(out);
      timer = setTimeout(step, Math.max(0, due - performance.now()));
    };
    timer = setTimeout(step, Math.max(0, due - performance.now()));
  }

  function embeddings(
    endpoint: Exclude<Endpoint, 'chat'>,
    body: Record<string, unknown>,
    key: string,
    d: Decision,
    res: ServerResponse,
    count: (o: string) => void,
  ): void {
    const t0 = performance.now();
    const ollama = endpoint !== 'embeddings';
    const model = typeof body['model'] === 'string' ? body['model'] : undefined;
    const rawInput = endpoint === 'ollama_embeddings' ? body['prompt'] : body['input'];
    const bad = (openai: ApiErrorBody, ollamaMessage: string): void => {
      count('bad_request');
      if (ollama) sendJson(res, 400, { error: ollamaMessage });
      else sendError(res, 400, openai);
    };
    if (!model) return bad(errors.missing('model'), 'model is required');
    if (rawInput === undefined)
      return bad(
        errors.missing('input'),
        endpoint === 'ollama_embeddings' ? 'prompt is required' : 'input is required',
      );
    const inputs = embeddingInputs(rawInput);
    if (typeof inputs === 'string') return bad(errors.invalid('input', inputs), inputs);
    const format = body['encoding_format'] ?? 'float';
    if (format !== 'float' && format !== 'base64')
      return bad(
        errors.invalid('encoding_format', "'encoding_format' must be 'float' or 'base64'"),
        'bad encoding_format',
      );
    const dimsRaw = body['dimensions'];
    const dims = dimsRaw === undefined ? p.embeddings.dimensions : Number(dimsRaw);
    if (!Number.isInteger(dims) || dims < 1 || dims > p.embeddings.dimensions)
      return bad(
        errors.invalid(
          'dimensions',
          `'dimensions' must be a whole number from 1 to ${p.embeddings.dimensions}`,
        ),
        'bad dimensions',
      );
    if (!ollama) {
      const quota = window.admit(performance.now(), inputs.tokens);
      if (quota) {
        count('rate_limited');
        return rateLimited(res, model, quota.kind, quota.retryMs, inputs.tokens);
      }
    }
    if (commonFault(d, res, count, model, inputs.tokens, ollama)) return;
    const ms = embeddingMs(p, inputs.tokens, requestRng(cfg.seed, key, 'latency'), state.slowFactor);
    if (d.fate === 'cut') {
      count('cut');
      return later(res, ms * d.cutAt, () => res.socket?.destroy());
    }
    // context_length by rate does not apply to embeddings: answered normally.
    later(res, ms, () => {
      count('ok');
      const vectors = inputs.texts.map((t) => embedText(t, dims));
      if (endpoint === 'ollama_embeddings') return sendJson(res, 200, { embedding: Array.from(vectors[0]!) });
      if (endpoint === 'ollama_embed') {
        const ns = Math.round((performance.now() - t0) * 1e6);
        return sendJson(res, 200, {
          model,
          embeddings: vectors.map((v) => Array.from(v)),
          total_duration: ns,
          load_duration: 0,
          prompt_eval_count: inputs.tokens,
        });
      }
      sendJson(
        res,
        200,
        {
          object: 'list',
          data: vectors.map((v, index) => ({
            object: 'embedding',
            index,
            embedding: format === 'base64' ? toBase64(v) : Array.from(v),
          })),
          model,
          usage: { prompt_tokens: inputs.tokens, total_tokens: inputs.tokens },
        },
        openaiHeaders(performance.now() - t0),
      );
    });
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

interface ChatRequest {
  model: string;
  messages: readonly unknown[];
  stream: boolean;
  includeUsage: boolean;
  maxTokens: number | undefined;
}

/** The fields the stub reads, or the missing parameter's name, or an error body. */
function parseChat(b: Record<string, unknown>): ChatRequest | string | ApiErrorBody {
  if (b['model'] === undefined) return 'model';
  if (typeof b['model'] !== 'string') return errors.invalid('model', "'model' must be a string.");
  if (b['messages'] === undefined) return 'messages';
  const messages = b['messages'];
  if (!Array.isArray(messages) || messages.length === 0)
    return errors.invalid(
      'messages',
      "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
    );
  const stream = b['stream'] === true;
  const so = b['stream_options'];
  if (so !== undefined && so !== null && !stream)
    return errors.invalid(
      'stream_options',
      "The 'stream_options' parameter is only allowed when 'stream' is enabled.",
    );
  const includeUsage = (so as { include_usage?: unknown } | null | undefined)?.include_usage === true;
  const mt = b['max_completion_tokens'] ?? b['max_tokens'];
  if (mt !== undefined && mt !== null && !(Number.isInteger(mt) && (mt as number) >= 1))
    return errors.invalid(
      b['max_completion_tokens'] !== undefined ? 'max_completion_tokens' : 'max_tokens',
      `Invalid 'max_tokens': integer below minimum value. Expected a value >= 1, but got ${JSON.stringify(mt)} instead.`,
    );
  return {
    model: b['model'],
    messages,
    stream,
    includeUsage,
    maxTokens: mt === undefined || mt === null ? undefined : (mt as number),
  };
}

/** Calls fn after ms unless the client goes away first. */
function later(res: ServerResponse, ms: number, fn: () => void): void {
  const t = setTimeout(fn, Math.max(0, ms));
  res.once('close', () => clearTimeout(t));
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed || res.headersSent) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function sendError(
  res: ServerResponse,
  status: number,
  body: ApiErrorBody,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, body, headers);
}

function drain(req: IncomingMessage): void {
  req.resume();
}

type JsonResult = { ok: true; value: Record<string, unknown> } | { ok: false; tooLarge: boolean };

function readJson(req: IncomingMessage): Promise<JsonResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) tooLarge = true;
      else chunks.push(c);
    });
    req.on('error', () => resolve({ ok: false, tooLarge }));
    req.on('end', () => {
      if (tooLarge) return resolve({ ok: false, tooLarge });
      try {
        const v: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        if (typeof v === 'object' && v !== null && !Array.isArray(v))
          resolve({ ok: true, value: v as Record<string, unknown> });
        else resolve({ ok: false, tooLarge: false });
      } catch {
        resolve({ ok: false, tooLarge: false });
      }
    });
  });
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
