import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** Where it listens ("127.0.0.1:9464", …), one per host it could bind. */
  readonly addresses: readonly string[];
  /** Hosts it could not bind, with why (the run goes on without them). */
  readonly failed: readonly string[];
  close(): Promise<void>;
}

/** A host to listen on; with `token`, a scrape must carry `Authorization: Bearer <token>`. */
export type MetricsListener =
  string | { readonly host: string; readonly port?: number; readonly token: string };

/** Whether the request carries the bearer token (compared in constant time). */
function authorized(req: IncomingMessage, token: string): boolean {
  const given = Buffer.from(req.headers.authorization ?? '');
  const want = Buffer.from(`Bearer ${token}`);
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * Serves `GET /metrics` (Prometheus text of `registry`) on each of `listeners` at `port`
 * (or the listener's own port) while a run is in progress. A listener with a token (one
 * other machines reach) answers 401 to a scrape without it. A host that cannot be bound
 * (port taken) is reported, not fatal: the live metrics are a view, the run's files are
 * the record.
 */
export async function startMetricsServer(
  registry: Registry,
  listeners: readonly MetricsListener[],
  port: number,
): Promise<MetricsServer> {
  const servers: Server[] = [];
  const addresses: string[] = [];
  const failed: string[] = [];
  for (const l of listeners) {
    const host = typeof l === 'string' ? l : l.host;
    const token = typeof l === 'string' ? undefined : l.token;
    const at = typeof l === 'string' ? port : (l.port ?? port);
    const srv = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
        return;
      }
      if (token !== undefined && !authorized(req, token)) {
        res
          .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
          .end('unauthorized: this address needs the bearer token given to the lab’s Prometheus\n');
        return;
      }
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
      );
    });
    try {
      await new Promise<void>((resolve, reject) => {
        srv.once('error', reject);
        srv.listen({ host, port: at }, () => resolve());
      });
      const a = srv.address();
      addresses.push(typeof a === 'object' && a ? `${host}:${a.port}` : host);
      servers.push(srv);
    } catch (err) {
      failed.push(`${host}:${at} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
  }
  return {
    addresses,
    failed,
    close: () =>
      Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      ).then(() => undefined),
  };
}
