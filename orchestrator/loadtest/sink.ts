import { createServer, type Socket } from 'node:net';

// Shaped like a common server's answer (several headers, a short body), so that the
// warm-up runs the same parser paths as the measured run.
const ANSWER = Buffer.from(
  'HTTP/1.1 200 OK\r\nServer: metabench-sink\r\nDate: Tue, 01 Dec 2026 00:00:00 GMT\r\nContent-Type: text/plain\r\nContent-Length: 3\r\nConnection: keep-alive\r\n\r\nok\n',
  'latin1',
);

/**
 * An HTTP sink on 127.0.0.1 that answers every request 200 with an empty body, for the
 * generator to warm its own code against before a measured run. It counts requests by
 * the blank line that ends each head (GET requests without a body, as the warm-up sends).
 */
export async function startSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    let tail = '';
    socket.on('data', (d: Buffer) => {
      const text = tail + d.toString('latin1');
      let at = 0;
      for (let i = text.indexOf('\r\n\r\n'); i >= 0; i = text.indexOf('\r\n\r\n', at)) {
        at = i + 4;
        socket.write(ANSWER);
      }
      tail = text.slice(at);
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
