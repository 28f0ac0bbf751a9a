import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Toxiproxy } from 'toxiproxy-node-client';
import { RealClock } from '../../foundation/clock.js';
import { HttpTransport } from '../../bench/transport/http.js';
import { startFaultProxy } from '../../services/faultproxy/server.js';
import { http } from '../helpers/sockets.js';

// Issue 35's acceptance for message loss: the fault proxy's `loss` toxic through the
// Toxiproxy API like any other, and 10,000 requests through a 5% loss link over real HTTP
// on loopback with the bench's own transport, each lost request seen only as the client's
// timeout (the connection stays open, stalled behind the hole).

const N = 10_000;
const P = 0.05;
const TIMEOUT_MS = 250;

test('loss 5% on the requests of a link: 5% ± 3 SD of 10,000 requests lost, each as a client timeout', async () => {
  // The server records which requests reached it: a lost one never does.
  const received = new Set<number>();
  const upstream = createServer((req, res) => {
    received.add(Number(req.headers['x-origin']));
    res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const fp = await startFaultProxy({ host: '127.0.0.1', port: 0, seed: 35 });
  try {
    const tp = new Toxiproxy(fp.url);
    const proxy = await tp.createProxy({
      name: 'api',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    });
    // The Toxiproxy API takes the toxic like any other, and lists it with its attributes.
    const added = await http(
      fp.url,
      'POST',
      '/proxies/api/toxics',
      JSON.stringify({ name: 'loss', type: 'loss', stream: 'upstream', attributes: { probability: P } }),
    );
    assert.equal(added.status, 200, added.text);
    assert.equal(
      added.text,
      '{"attributes":{"probability":0.05},"name":"loss","type":"loss","stream":"upstream","toxicity":1}',
    );
    const listed = await http(fp.url, 'GET', '/proxies/api/toxics');
    assert.deepEqual(JSON.parse(listed.text), [
      { attributes: { probability: 0.05 }, name: 'loss', type: 'loss', stream: 'upstream', toxicity: 1 },
    ]);

    const transport = new HttpTransport({
      url: `http://${proxy.listen}`,
      connections: 64,
      clock: new RealClock(),
    });
    const kinds = new Map<string, number>();
    const timedOut = new Set<number>();
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < N) {
        const id = next++;
        const signal = AbortSignal.timeout(TIMEOUT_MS);
        const r = await transport.send(
          { origin: { id, intendedMs: 0, deadlineMs: TIMEOUT_MS }, number: 1 },
          { 'x-origin': String(id) },
          signal,
        );
        if (signal.aborted) timedOut.add(id);
        else kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 64 }, worker));
    await transport.close();
    const sd = Math.sqrt(N * P * (1 - P));
    const lost = Array.from({ length: N }, (_, i) => i).filter((i) => !received.has(i));
    const slow = [...timedOut].filter((i) => received.has(i)).length;
    console.log(
      `lost ${lost.length} of ${N} (expected ${N * P} ± ${(3 * sd).toFixed(1)}); ${slow} more timed out slow (the machine's load)`,
    );
    assert.ok(Math.abs(lost.length - N * P) <= 3 * sd, `${lost.length} requests never reached the server`);
    // Each lost request ended as the client's own timeout, nothing else.
    for (const i of lost) assert.ok(timedOut.has(i), `request ${i} was lost but did not time out`);
    // Every other request succeeded or was slow: a lost message is never a reset or a refused connection.
    assert.deepEqual([...kinds], [['ok', N - timedOut.size]]);
  } finally {
    await fp.close();
    await new Promise<void>((r) => upstream.close(() => r()));
  }
});
