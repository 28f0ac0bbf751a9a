import { connect, createServer, type Server, type Socket } from 'node:net';
import { request } from 'undici';

/** A TCP server on 127.0.0.1:0 running `onConnection` for each client. */
export async function tcpServer(
  onConnection: (s: Socket) => void,
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    onConnection(s);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** An echo server: every byte comes back. */
export function echoServer(): Promise<{ port: number; close(): Promise<void> }> {
  return tcpServer((s) => s.pipe(s));
}

export function connectTo(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', noDelay: true });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** What happened to a client socket: bytes received (with times) and how it ended. */
export interface SocketLog {
  chunks: { atMs: number; bytes: number; text: string }[];
  endedAtMs?: number;
  error?: string;
  closedAtMs?: number;
}

export function watch(s: Socket, t0 = performance.now()): SocketLog {
  const log: SocketLog = { chunks: [] };
  s.on('data', (d: Buffer) =>
    log.chunks.push({ atMs: performance.now() - t0, bytes: d.length, text: d.toString() }),
  );
  s.on('end', () => (log.endedAtMs = performance.now() - t0));
  s.on('error', (e: NodeJS.ErrnoException) => (log.error = e.code ?? e.message));
  s.on('close', () => (log.closedAtMs = performance.now() - t0));
  return log;
}

/** Writes `msg` and resolves with the ms until the same number of bytes came back. */
export function echoRoundTrip(s: Socket, msg: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let got = 0;
    const onData = (d: Buffer): void => {
      got += d.length;
      if (got >= msg.length) {
        s.off('data', onData);
        s.off('close', onClose);
        resolve(performance.now() - t0);
      }
    };
    const onClose = (): void => reject(new Error('closed before the echo came back'));
    s.on('data', onData);
    s.once('close', onClose);
    s.write(msg);
  });
}

export async function waitUntil(what: string, cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const t0 = performance.now();
  while (!cond()) {
    if (performance.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** One HTTP request, everything of the answer kept as sent. */
export async function http(
  base: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const res = await request(base + path, {
    method: method as 'GET',
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.body.text();
  const h: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers: h, text };
}
