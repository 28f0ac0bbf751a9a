import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { RealClock, type Clock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import { apiHandler } from './api.js';
import { ProxyCollection } from './proxyCollection.js';

export interface FaultProxyOptions {
  /** API address; Toxiproxy's -host and -port. */
  readonly host: string;
  readonly port: number;
  /** Toxicity and jitter draws; Toxiproxy's -seed. */
  readonly seed?: number;
  readonly clock?: Clock;
  readonly requestTimeoutMs?: number;
}

export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  readonly proxies: ProxyCollection;
  /** Populates from a JSON file like Toxiproxy's -config; throws with the reason when it cannot. */
  populateFromFile(file: string): Promise<number>;
  close(): Promise<void>;
}

/** Starts the fault proxy's API (no proxies yet). */
export async function startFaultProxy(opts: FaultProxyOptions): Promise<FaultProxy> {
  const proxies = new ProxyCollection({
    clock: opts.clock ?? new RealClock(),
    rng: seededRng(opts.seed ?? Date.now(), 'faultproxy'),
  });
  const server: Server = createServer(
    apiHandler(
      proxies,
      opts.requestTimeoutMs === undefined ? {} : { requestTimeoutMs: opts.requestTimeoutMs },
    ),
  );
  server.keepAliveTimeout = 60_000; // Toxiproxy's IdleTimeout
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: opts.host, port: opts.port }, () => resolve());
  });
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : opts.port;
  const hostInUrl = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    host: opts.host,
    port,
    url: `http://${hostInUrl}:${port}`,
    proxies,
    async populateFromFile(file) {
      const text = await readFile(file, 'utf8');
      const { proxies: done, error } = await proxies.populateJson(text);
      if (error) throw new Error(`${file}: ${error.message}`);
      return done?.length ?? 0;
    },
    async close() {
      await proxies.stopAll();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
