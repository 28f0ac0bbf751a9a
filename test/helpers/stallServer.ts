import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A tiny HTTP server that answers 200 at once, except that between `stallFromMs` and
 * `stallToMs` after `start()` it holds every response until `stallToMs` (it "stops
 * answering" for a while, like a GC pause or a frozen process).
 */
export async function startStallServer(o: { stallFromMs: number; stallToMs: number }) {
  let t0 = performance.now();
  const held: ServerResponse[] = [];
  let released = false;
  let received = 0;
  const server = createServer((_req, res) => {
    received++;
    const t = performance.now() - t0;
    if (!released && t >= o.stallFromMs && t < o.stallToMs) held.push(res);
    else res.end('ok\n');
  });
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  let timer: NodeJS.Timeout | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    /** Restarts the server's clock (call just before the load starts). */
    start(): void {
      t0 = performance.now();
      timer = setTimeout(() => {
        released = true;
        for (const res of held.splice(0)) res.end('ok\n');
        released = false;
      }, o.stallToMs);
    },
    get received(): number {
      return received;
    },
    close: () =>
      new Promise<void>((r) => {
        clearTimeout(timer);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
