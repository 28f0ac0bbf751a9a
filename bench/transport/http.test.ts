import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VirtualClock } from '../../foundation/clock.js';
import { policyEnv, stack, viaTransport } from '../policy/ClientPolicy.js';
import { DEADLINE_HEADER, propagateDeadline } from '../policy/deadline.js';
import { sendOf } from '../policy/dispatch.js';
import { seededRng } from '../../foundation/rng.js';
import { HttpTransport, parseRetryAfter } from './http.js';
import { overReplicas } from './replicas.js';
import type { TransportResult } from './Transport.js';
import type { InFlight } from '../policy/dispatch.js';

test('Retry-After: delay-seconds, or an HTTP-date against the response Date header', () => {
  assert.equal(parseRetryAfter('2', undefined), 2000);
  assert.equal(parseRetryAfter(' 0 ', undefined), 0);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:05 GMT', 'Wed, 21 Oct 2026 07:28:00 GMT'), 5000);
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:05 GMT', undefined), undefined); // no reference: ignored
  assert.equal(parseRetryAfter('Wed, 21 Oct 2026 07:27:00 GMT', 'Wed, 21 Oct 2026 07:28:00 GMT'), 0);
  assert.equal(parseRetryAfter('soon', undefined), undefined);
  assert.equal(parseRetryAfter(undefined, undefined), undefined);
});

test('over real HTTP: a 429 reports its Retry-After, a 400 is a plain 4xx, and x-deadline-ms reaches the server', async () => {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    if (req.url === '/busy') res.writeHead(429, { 'retry-after': '3' }).end();
    else if (req.url === '/bad') res.writeHead(400).end();
    else res.writeHead(200).end('ok');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const signal = new AbortController().signal;
  const origin = { id: 5, intendedMs: 0, deadlineMs: 800 };
  try {
    const busy = new HttpTransport({ url, path: '/busy', connections: 2, clock: new VirtualClock() });
    assert.deepEqual(await busy.send({ origin, number: 1 }, undefined, signal), {
      kind: 'http-4xx',
      status: 429,
      clientWaitMs: 0,
      retryAfterMs: 3000,
    });
    const bad = new HttpTransport({ url, path: '/bad', connections: 2, clock: new VirtualClock() });
    assert.deepEqual(await bad.send({ origin, number: 1 }, undefined, signal), {
      kind: 'http-4xx',
      status: 400,
      clientWaitMs: 0,
    });
    // Through the deadline policy: the header the api will honour, with the remaining ms.
    const clock = new VirtualClock();
    await clock.advanceTo(250);
    const ok = new HttpTransport({ url, connections: 2, clock });
    const send = sendOf(
      stack([propagateDeadline()], viaTransport(ok, clock), policyEnv(clock, seededRng(1))),
    );
    const r = await send({ origin, number: 2 }, signal);
    assert.equal(r.kind, 'ok');
    const h = seen.at(-1)!;
    assert.equal(h[DEADLINE_HEADER], '550');
    assert.equal(h['x-attempt'], '2');
    assert.equal(h['x-origin-id'], '5');
    await Promise.all([busy.close(), bad.close(), ok.close()]);
  } finally {
    server.close();
  }
});

/** A loopback server that counts the connections it accepted and answers by path. */
async function countingServer(
  handle: (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => void,
) {
  const server = createServer(handle);
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

const live = (): AbortSignal => new AbortController().signal;
const originN = (id: number) => ({ origin: { id, intendedMs: 0, deadlineMs: Infinity }, number: 1 });

test('keep-alive: sequential attempts share one connection; concurrent ones open one each, up to the cap', async () => {
  const s = await countingServer((req, res) => setTimeout(() => res.end('ok'), req.url === '/slow' ? 30 : 0));
  const t = new HttpTransport({ url: s.url, path: '/fast', connections: 3, clock: new VirtualClock() });
  try {
    for (let i = 0; i < 20; i++) assert.equal((await t.send(originN(i), undefined, live())).kind, 'ok');
    assert.equal(s.connections, 1);
    const slow = new HttpTransport({ url: s.url, path: '/slow', connections: 3, clock: new VirtualClock() });
    const rs = await Promise.all([0, 1, 2, 3, 4].map((i) => slow.send(originN(i), undefined, live())));
    assert.deepEqual(
      rs.map((r) => r.kind),
      ['ok', 'ok', 'ok', 'ok', 'ok'],
    );
    // Three connections for five concurrent attempts: two waited inside the client.
    assert.equal(s.connections, 1 + 3);
    assert.equal(slow.sockets, 3);
    assert.equal(slow.openConnections, 0);
    await slow.close();
  } finally {
    await t.close();
    await s.close();
  }
});

test('a wait for a connection is reported as clientWaitMs, on the transport clock', async () => {
  const { RealClock } = await import('../../foundation/clock.js');
  const s = await countingServer((_req, res) => setTimeout(() => res.end('ok'), 50));
  const t = new HttpTransport({ url: s.url, connections: 1, clock: new RealClock() });
  try {
    const [a, b] = await Promise.all([
      t.send(originN(1), undefined, live()),
      t.send(originN(2), undefined, live()),
    ]);
    assert.equal(a.clientWaitMs, 0);
    assert.ok(b.clientWaitMs! >= 40, `second attempt waited ${b.clientWaitMs} ms`);
    assert.equal(s.connections, 1);
  } finally {
    await t.close();
    await s.close();
  }
});

test('an aborted attempt is a timeout and costs its connection; the next attempt gets a fresh one', async () => {
  const s = await countingServer((req, res) => {
    if (req.url === '/never') return; // never answers
    res.end('ok');
  });
  const t = new HttpTransport({ url: s.url, path: '/never', connections: 4, clock: new VirtualClock() });
  try {
    const ctl = new AbortController();
    const p = t.send(originN(1), undefined, ctl.signal);
    setTimeout(() => ctl.abort(), 30);
    assert.deepEqual(await p, { kind: 'timeout', status: 0, clientWaitMs: 0 });
    assert.equal(t.sockets, 0);
    assert.equal(t.openConnections, 0);
    const ok = await t.send(
      { ...originN(2), origin: { ...originN(2).origin, request: okRequest } },
      undefined,
      live(),
    );
    assert.equal(ok.kind, 'ok');
    assert.equal(s.connections, 2);
  } finally {
    await t.close();
    await s.close();
  }
});

const okRequest = { cls: 0, method: 'GET' as const, path: '/ok', body: undefined, key: 0 };

test('bodies and headers reach the server; a Connection: close answer closes the socket and the next attempt reconnects', async () => {
  const got: { method: string | undefined; body: string; len: string | undefined }[] = [];
  const s = await countingServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      got.push({ method: req.method, body, len: req.headers['content-length'] });
      if (req.url === '/close') res.writeHead(200, { connection: 'close' });
      res.end('x'.repeat(70_000)); // several reads, and chunked is not needed for a known length
    });
  });
  const t = new HttpTransport({ url: s.url, connections: 2, clock: new VirtualClock() });
  const post = (id: number, path: string) => ({
    origin: {
      id,
      intendedMs: 0,
      deadlineMs: Infinity,
      request: { cls: 0, method: 'POST' as const, path, body: Buffer.from('hello'), key: 0 },
    },
    number: 1,
  });
  try {
    assert.equal((await t.send(post(1, '/close'), { 'x-extra': 'y' }, live())).kind, 'ok');
    assert.equal((await t.send(post(2, '/keep'), undefined, live())).kind, 'ok');
    assert.equal((await t.send(post(3, '/keep'), undefined, live())).kind, 'ok');
    assert.deepEqual(got, [
      { method: 'POST', body: 'hello', len: '5' },
      { method: 'POST', body: 'hello', len: '5' },
      { method: 'POST', body: 'hello', len: '5' },
    ]);
    assert.equal(s.connections, 2);
  } finally {
    await t.close();
    await s.close();
  }
});

test('chunked answers are read to their end; failures are kinds: refused, reset mid-answer', async () => {
  const s = await countingServer((req, res) => {
    if (req.url === '/reset') {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.destroy(), 10);
      return;
    }
    res.writeHead(503, { 'x-shed': '1', 'retry-after': '1' });
    res.write('a');
    setTimeout(() => res.end('b'), 5);
  });
  try {
    const shed = new HttpTransport({ url: s.url, connections: 1, clock: new VirtualClock() });
    assert.deepEqual(await shed.send(originN(1), undefined, live()), {
      kind: 'shed',
      status: 503,
      clientWaitMs: 0,
      retryAfterMs: 1000,
    });
    const reset = new HttpTransport({
      url: s.url,
      path: '/reset',
      connections: 1,
      clock: new VirtualClock(),
    });
    assert.equal((await reset.send(originN(2), undefined, live())).kind, 'conn-reset');
    await Promise.all([shed.close(), reset.close()]);
  } finally {
    await s.close();
  }
  const { freePort } = await import('../../benchmarks/nginx.js');
  const refused = new HttpTransport({
    url: `http://127.0.0.1:${await freePort()}`,
    connections: 1,
    clock: new VirtualClock(),
  });
  assert.equal((await refused.send(originN(3), undefined, live())).kind, 'conn-refused');
  assert.equal(refused.sockets, 0);
  await refused.close();
});

test("the server's Keep-Alive timeout shortens ours; prepare() opens connections before the first send", async () => {
  const s = await countingServer((_req, res) => {
    res.writeHead(200, { 'keep-alive': 'timeout=2' });
    res.end('ok');
  });
  const t = new HttpTransport({ url: s.url, connections: 3, clock: new VirtualClock() });
  try {
    await t.prepare(5); // never beyond the cap
    assert.equal(t.sockets, 3);
    // The client's handshake can finish before the server's accept callback runs.
    for (let i = 0; i < 100 && s.connections < 3; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(s.connections, 3);
    assert.equal((await t.send(originN(1), undefined, live())).kind, 'ok');
    assert.equal(t.keepAliveMs, 1000);
    assert.equal(s.connections, 3);
  } finally {
    await t.close();
    await s.close();
  }
});

test('over real HTTP, two replicas: each attempt reaches the server of its replica, over connections of its own', async () => {
  const hits: string[][] = [[], []];
  const servers = [0, 1].map((i) =>
    createServer((req, res) => {
      hits[i]!.push(String(req.headers['x-origin-id']));
      res.writeHead(200).end(`replica ${i}`);
    }),
  );
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
  const clock = new VirtualClock();
  const t = overReplicas(
    servers.map(
      (s) =>
        new HttpTransport({
          url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`,
          connections: 2,
          clock,
        }),
    ),
  );
  const signal = new AbortController().signal;
  try {
    const at = (id: number, replica?: number) =>
      t.send(
        {
          origin: { id, intendedMs: 0, deadlineMs: Infinity },
          number: 1,
          ...(replica === undefined ? {} : { replica }),
        },
        undefined,
        signal,
      );
    const results = await Promise.all([at(1, 1), at(2), at(3, 0), at(4, 1)]);
    assert.ok(results.every((r) => r.kind === 'ok'));
    // No replica: replica 0.
    assert.deepEqual(
      hits.map((h) => [...h].sort()),
      [
        ['2', '3'],
        ['1', '4'],
      ],
    );
    assert.equal(t.replicas, 2);
    assert.equal(t.openConnections, 0); // all answered: none busy
  } finally {
    await t.close();
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
});

/** Dispatches one attempt and resolves with its result (the handler is the test's). */
function dispatched(t: HttpTransport, id: number, onResult?: (r: TransportResult) => void) {
  let inFlight: InFlight | undefined;
  const result = new Promise<TransportResult>((resolve) => {
    inFlight = t.dispatch(originN(id), undefined, {
      onResult(r) {
        onResult?.(r);
        resolve(r);
      },
    });
  });
  return { result, inFlight: inFlight! };
}

test('dispatch: a handler that dispatches again from its answer gets the connection the answer freed', async () => {
  const s = await countingServer((_req, res) => res.end('ok'));
  const t = new HttpTransport({ url: s.url, connections: 4, clock: new VirtualClock() });
  try {
    const kinds: string[] = [];
    let second: Promise<TransportResult> | undefined;
    const first = dispatched(t, 1, () => (second = dispatched(t, 2).result));
    kinds.push((await first.result).kind);
    kinds.push((await second!).kind);
    assert.deepEqual(kinds, ['ok', 'ok']);
    assert.equal(s.connections, 1);
    // Aborting an attempt that has settled does nothing, though its connection has carried another since.
    first.inFlight.abort();
    assert.equal(t.sockets, 1);
    assert.equal((await dispatched(t, 3).result).kind, 'ok');
    assert.equal(s.connections, 1);
  } finally {
    await t.close();
    await s.close();
  }
});

test('dispatch: aborting an attempt that waits for a connection answers at once, and the wait does not take the connection', async () => {
  const { RealClock } = await import('../../foundation/clock.js');
  const s = await countingServer((_req, res) => setTimeout(() => res.end('ok'), 40));
  const t = new HttpTransport({ url: s.url, connections: 1, clock: new RealClock() });
  try {
    const a = dispatched(t, 1);
    let answered: TransportResult | undefined;
    const b = dispatched(t, 2, (r) => (answered = r));
    const c = dispatched(t, 3);
    await new Promise((r) => setTimeout(r, 10));
    b.inFlight.abort();
    assert.equal(answered?.kind, 'timeout'); // synchronously, inside abort
    assert.ok((answered?.clientWaitMs ?? 0) > 0);
    assert.equal((await a.result).kind, 'ok');
    const rc = await c.result;
    assert.equal(rc.kind, 'ok');
    assert.ok((rc.clientWaitMs ?? 0) >= 30, `c waited ${rc.clientWaitMs} ms for a's connection`);
    assert.equal(s.connections, 1);
  } finally {
    await t.close();
    await s.close();
  }
});

test('dispatch on a closed transport answers timeout at once', async () => {
  const t = new HttpTransport({ url: 'http://127.0.0.1:9', connections: 1, clock: new VirtualClock() });
  await t.close();
  let r: TransportResult | undefined;
  t.dispatch(originN(1), undefined, { onResult: (x) => (r = x) });
  assert.deepEqual(r, { kind: 'timeout', status: 0, clientWaitMs: 0 });
});

test('raw answers: headers split across reads, a chunked body, and a body that runs to the end of the stream', async () => {
  const { createServer: createTcpServer } = await import('node:net');
  const pause = () => new Promise((r) => setTimeout(r, 5));
  // Each answer goes out in pieces, so the reads that carry it end mid-line and mid-chunk.
  const answers: Record<string, string[]> = {
    '/split': [
      'HTTP/1.1 503 Service Unavai',
      'lable\r\nX-Sh',
      'ed: 1\r\nRetry-After: 2\r\nContent-Length: 2\r\n\r\n',
      'no',
    ],
    '/chunked': ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel', 'lo\r\n0\r\n', '\r\n'],
    '/eof': ['HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nhel', 'lo'],
  };
  const server = createTcpServer((sock) => {
    let buf = '';
    sock.on('data', async (d) => {
      buf += d.toString('latin1');
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const path = buf.split(' ')[1]!;
      buf = buf.slice(end + 4);
      for (const piece of answers[path]!) {
        sock.write(piece);
        await pause();
      }
      if (path === '/eof') sock.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const on = (path: string) => ({
    ...originN(1),
    origin: { ...originN(1).origin, request: { ...okRequest, path } },
  });
  const t = new HttpTransport({ url, connections: 1, clock: new VirtualClock() });
  try {
    assert.deepEqual(await t.send(on('/split'), undefined, live()), {
      kind: 'shed',
      status: 503,
      clientWaitMs: 0,
      retryAfterMs: 2000,
    });
    assert.deepEqual(await t.send(on('/chunked'), undefined, live()), {
      kind: 'ok',
      status: 200,
      clientWaitMs: 0,
    });
    assert.deepEqual(await t.send(on('/eof'), undefined, live()), {
      kind: 'ok',
      status: 200,
      clientWaitMs: 0,
    });
    assert.equal(t.openConnections, 0);
  } finally {
    await t.close();
    server.close();
  }
});
