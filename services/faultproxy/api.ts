import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { goJsonString } from './goJson.js';
import { ApiError, asApiError, ErrMissingField, ErrToxicNotFound, joinError } from './errors.js';
import { ProxyAlreadyStarted, type Proxy } from './proxy.js';
import { decodeProxyBody, type ProxyCollection } from './proxyCollection.js';
import { toxicJson } from './toxicCollection.js';

/** The Toxiproxy release whose API this server speaks. */
export const TOXIPROXY_VERSION = '2.12.0';

/** What a handler answers; written out by `send`. */
type Reply =
  | { kind: 'json'; status: number; body: string }
  | { kind: 'error'; error: ApiError }
  | { kind: 'empty'; status: number }
  | { kind: 'raw'; status: number; headers: Record<string, string>; body: string };

type Handler = (params: string[], body: string) => Promise<Reply>;

interface Route {
  readonly pattern: RegExp;
  readonly methods: Readonly<Record<string, Handler>>;
}

const json = (body: string, status = 200): Reply => ({ kind: 'json', status, body });
const empty: Reply = { kind: 'empty', status: 204 };

export interface ApiOptions {
  /** Toxiproxy's http.TimeoutHandler: a request still running after this answers 503. */
  readonly requestTimeoutMs?: number;
}

/**
 * The Toxiproxy 2.12 HTTP API over a ProxyCollection: same routes, status codes, JSON
 * shapes and error bodies (errors are JSON sent as text/plain with a trailing newline,
 * as Go's http.Error writes them). See shared/research/fault-injection.md §1.
 */
export function apiHandler(proxies: ProxyCollection, opts: ApiOptions = {}): RequestListener {
  const timeoutMs = opts.requestTimeoutMs ?? 25_000;
  const proxy = (params: string[]): Proxy => proxies.get(params[0]!);

  const routes: Route[] = [
    {
      pattern: /^\/reset$/,
      methods: {
        POST: async () => {
          for (const p of proxies.all()) {
            try {
              await p.start();
            } catch (err) {
              if (!(err instanceof ProxyAlreadyStarted)) throw err;
            }
            await p.toxics.reset();
          }
          return empty;
        },
      },
    },
    {
      pattern: /^\/proxies$/,
      methods: {
        GET: async () =>
          json(
            `{${proxies
              .sorted()
              .map((p) => `${goJsonString(p.name)}:${p.toJson()}`)
              .join(',')}}`,
          ),
        POST: async (_, body) => {
          const input = decodeProxyBody(body, { name: '', listen: '', upstream: '', enabled: true });
          if (input.name.length < 1) throw joinError('name', ErrMissingField);
          if (input.upstream.length < 1) throw joinError('upstream', ErrMissingField);
          const p = proxies.newProxy(input.name, input.listen, input.upstream);
          await proxies.add(p, input.enabled);
          return json(p.toJson(), 201);
        },
      },
    },
    {
      pattern: /^\/populate$/,
      methods: {
        POST: async (_, body) => {
          const { proxies: done, error } = await proxies.populateJson(body);
          const list = done && done.length > 0 ? `[${done.map((p) => p.toJson()).join(',')}]` : 'null';
          if (!error) return json(`{"proxies":${list}}`, 201);
          const e = asApiError(error);
          return json(
            `{"error":${goJsonString(e.message)},"status":${e.status},"proxies":${list}}`,
            e.status,
          );
        },
      },
    },
    {
      pattern: /^\/proxies\/([^/]+)$/,
      methods: {
        GET: async (params) => json(proxy(params).toJson()),
        POST: (params, body) => updateProxy(proxy(params), body),
        PATCH: (params, body) => updateProxy(proxy(params), body),
        DELETE: async (params) => {
          await proxies.remove(params[0]!);
          return empty;
        },
      },
    },
    {
      pattern: /^\/proxies\/([^/]+)\/toxics$/,
      methods: {
        GET: async (params) => json(`[${proxy(params).toxics.list().map(toxicJson).join(',')}]`),
        // 200, not 201: Toxiproxy answers a created toxic with 200.
        POST: async (params, body) => json(toxicJson(await proxy(params).toxics.addToxicJson(body))),
      },
    },
    {
      pattern: /^\/proxies\/([^/]+)\/toxics\/([^/]+)$/,
      methods: {
        GET: async (params) => {
          const w = proxy(params).toxics.find(params[1]!);
          if (!w) throw ErrToxicNotFound;
          return json(toxicJson(w));
        },
        POST: (params, body) => updateToxic(proxy(params), params[1]!, body),
        PATCH: (params, body) => updateToxic(proxy(params), params[1]!, body),
        DELETE: async (params) => {
          await proxy(params).toxics.removeToxic(params[1]!);
          return empty;
        },
      },
    },
    {
      pattern: /^\/version$/,
      methods: {
        GET: async () => ({
          kind: 'raw',
          status: 200,
          headers: { 'Content-Type': 'application/json;charset=utf-8' },
          body: `{"version": "${TOXIPROXY_VERSION}"}\n`,
        }),
      },
    },
  ];

  return (req, res) => {
    void serve(routes, timeoutMs, req, res).catch((err: unknown) => {
      if (!res.headersSent) send(res, { kind: 'error', error: asApiError(err) });
      else res.destroy();
    });
  };
}

async function updateProxy(p: Proxy, body: string): Promise<Reply> {
  // Absent fields keep their current values; `name` is ignored (no renames).
  const input = decodeProxyBody(body, {
    name: p.name,
    listen: p.listen,
    upstream: p.upstream,
    enabled: p.enabled,
  });
  await p.update(input);
  return json(p.toJson());
}

async function updateToxic(p: Proxy, name: string, body: string): Promise<Reply> {
  return json(toxicJson(await p.toxics.updateToxicJson(name, body)));
}

async function serve(
  routes: Route[],
  timeoutMs: number,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const rawPath = (req.url ?? '/').split('?')[0]!;
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    send(res, {
      kind: 'raw',
      status: 400,
      headers: { 'Content-Type': 'text/plain; charset=utf-8' },
      body: '400 Bad Request',
    });
    return;
  }
  const clean = cleanPath(path);
  if (clean !== path) {
    // gorilla/mux redirects unclean paths (//proxies, /a/../proxies) to their clean form.
    res.writeHead(301, { Location: clean, 'Content-Length': '0' }).end();
    return;
  }
  let route: Route | undefined;
  let params: string[] = [];
  for (const r of routes) {
    const m = r.pattern.exec(path);
    if (m) {
      route = r;
      params = m.slice(1);
      break;
    }
  }
  if (!route) {
    send(res, {
      kind: 'raw',
      status: 404,
      headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
      body: '404 page not found\n',
    });
    return;
  }
  const handler = route.methods[req.method ?? 'GET'];
  if (!handler) {
    // gorilla/mux: the path exists, the method does not: 405 with an empty body.
    res.writeHead(405, { 'Content-Length': '0' }).end();
    return;
  }
  // The middlewares of matched routes, in Toxiproxy's order: request id, browser block, timeout.
  res.setHeader('X-Toxiproxy-Request-Id', requestId());
  if ((req.headers['user-agent'] ?? '').startsWith('Mozilla/')) {
    send(res, {
      kind: 'raw',
      status: 403,
      headers: { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff' },
      body: 'User agent not allowed\n',
    });
    return;
  }
  const body = await readBody(req);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<Reply>((resolve) => {
    timer = setTimeout(
      () =>
        resolve({
          kind: 'raw',
          status: 503,
          headers: { 'Content-Type': 'text/html; charset=utf-8' },
          body: '<html><head><title>Timeout</title></head><body><h1>Timeout</h1></body></html>',
        }),
      timeoutMs,
    );
  });
  // Through a promise, so a handler that throws before its first await still clears the timer.
  const work = Promise.resolve()
    .then(() => handler(params, body))
    .catch((err: unknown): Reply => ({ kind: 'error', error: asApiError(err) }));
  const reply = await Promise.race([work, timedOut]);
  clearTimeout(timer);
  send(res, reply);
}

function send(res: ServerResponse, reply: Reply): void {
  switch (reply.kind) {
    case 'json':
      res
        .writeHead(reply.status, {
          'Content-Type': 'application/json',
          'Content-Length': String(Buffer.byteLength(reply.body)),
        })
        .end(reply.body);
      return;
    case 'error': {
      const e = reply.error;
      const body = `{"error":${goJsonString(e.message)},"status":${e.status}}\n`;
      res
        .writeHead(e.status, {
          'Content-Type': 'text/plain; charset=utf-8',
          'X-Content-Type-Options': 'nosniff',
          'Content-Length': String(Buffer.byteLength(body)),
        })
        .end(body);
      return;
    }
    case 'empty':
      res.writeHead(reply.status).end();
      return;
    case 'raw':
      res
        .writeHead(reply.status, {
          ...reply.headers,
          'Content-Length': String(Buffer.byteLength(reply.body)),
        })
        .end(reply.body);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

/** gorilla/mux's cleanPath: path.Clean, keeping a trailing slash. */
function cleanPath(p: string): string {
  if (p === '') return '/';
  if (!p.startsWith('/')) p = '/' + p;
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  let np = '/' + out.join('/');
  if (p.endsWith('/') && np !== '/') np += '/';
  return np;
}

// ---- request ids like zerolog's hlog.RequestIDHandler (an xid: 20 base32hex characters) ----

const machine = randomBytes(3);
let counter = randomBytes(3).readUIntBE(0, 3);

function requestId(): string {
  const b = Buffer.alloc(12);
  b.writeUInt32BE(Math.floor(Date.now() / 1000) >>> 0, 0);
  machine.copy(b, 4);
  b.writeUInt16BE(process.pid & 0xffff, 7);
  counter = (counter + 1) & 0xffffff;
  b.writeUIntBE(counter, 9, 3);
  const alphabet = '0123456789abcdefghijklmnopqrstuv';
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of b) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}
