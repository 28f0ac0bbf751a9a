import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { VirtualClock } from '../clock.js';
import { policyEnv, stack, viaTransport } from '../policy/ClientPolicy.js';
import { DEADLINE_HEADER, propagateDeadline } from '../policy/deadline.js';
import { seededRng } from '../rng.js';
import { HttpTransport, parseRetryAfter } from './http.js';

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
    const send = stack([propagateDeadline()], viaTransport(ok, clock), policyEnv(clock, seededRng(1)));
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
