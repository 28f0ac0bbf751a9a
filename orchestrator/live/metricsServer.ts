import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface MetricsServer {
  /** Where it listens ("127.0.0.1:9464", …), one per host it could bind. */
  readonly addresses: readonly string[];
  /** Hosts it could not bind, with why (the run goes on without them). */
  readonly failed: readonly string[];
  close(): Promise<void>;
}

/**
 * Serves `GET /metrics` (Prometheus text of `registry`) on each of `hosts` at `port`
 * while a run is in progress. A host that cannot be bound (port taken) is reported, not
 * fatal: the live metrics are a view, the run's files are the record.
 */
export async function startMetricsServer(
  registry: Registry,
  hosts: readonly string[],
  port: number,
): Promise<MetricsServer> {
  const servers: Server[] = [];
  const addresses: string[] = [];
  const failed: string[] = [];
  for (const host of hosts) {
    const srv = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: try /metrics\n');
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
        srv.listen({ host, port }, () => resolve());
      });
      const a = srv.address();
      addresses.push(typeof a === 'object' && a ? `${host}:${a.port}` : host);
      servers.push(srv);
    } catch (err) {
      failed.push(`${host}:${port} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
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
