import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ResponseParser } from './responseParser.js';

/** Parses `wire` cut at `cuts`, each piece written into one reused buffer holding stale bytes past it (as the socket's). */
function parse(wire: string, cuts: readonly number[] = [], eof = false): { log: string[]; ok: boolean } {
  const log: string[] = [];
  const p = new ResponseParser({
    onHead: (status, keepAlive, eventStream) =>
      log.push(`head ${status}${keepAlive ? ' keep-alive' : ''}${eventStream ? ' event-stream' : ''}`),
    onBody: (buf, s, e) => log.push(`body ${buf.toString('latin1', s, e)}`),
    onComplete: () => log.push(`end shed=${p.shed} retry-after=${p.retryAfter} date=${p.date}`),
  });
  const shared = Buffer.alloc(wire.length + 4096, '\r\n\r\nHTTP/1.1 200 OK\r\n\r\n');
  let ok = true;
  const bounds = [0, ...cuts, wire.length];
  for (let k = 1; k < bounds.length && ok; k++) {
    const n = shared.write(wire.slice(bounds[k - 1], bounds[k]), 0, 'latin1');
    ok = p.execute(shared, 0, n);
  }
  if (eof) p.finish();
  // Body pieces joined: how a body was cut depends on the reads.
  const joined: string[] = [];
  for (const l of log)
    if (l.startsWith('body ') && joined.at(-1)?.startsWith('body ')) joined[joined.length - 1] += l.slice(5);
    else joined.push(l);
  return { log: joined, ok };
}

const ANSWERS: [string, string, string[]][] = [
  [
    'Content-Length, keep-alive by default',
    'HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\nCONTENT-LENGTH: 3\r\n\r\nok\n',
    ['head 200 keep-alive', 'body ok\n', 'end shed=false retry-after=undefined date=undefined'],
  ],
  [
    "a 503's x-shed, Retry-After and Date; Connection: close",
    'HTTP/1.1 503 Service Unavailable\r\nx-shed: 1\r\nRetry-After:  2 \r\nDate: Wed, 21 Oct 2026 07:28:00 GMT\r\nConnection: close\r\nContent-Length: 0\r\n\r\n',
    ['head 503', 'end shed=true retry-after=2 date=Wed, 21 Oct 2026 07:28:00 GMT'],
  ],
  [
    'chunked, with an extension and a trailer; an event stream',
    'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\nA\r\n, world!!!\r\n0\r\nX-Trailer: 1\r\n\r\n',
    [
      'head 200 keep-alive event-stream',
      'body hello, world!!!',
      'end shed=false retry-after=undefined date=undefined',
    ],
  ],
  [
    '100 Continue skipped; 204 has no body; HTTP/1.0 keep-alive',
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.0 204 No Content\r\nConnection: Keep-Alive\r\n\r\n',
    ['head 204 keep-alive', 'end shed=false retry-after=undefined date=undefined'],
  ],
];

test('every answer parses the same however its bytes are cut into reads', () => {
  for (const [what, wire, expected] of ANSWERS) {
    assert.deepEqual(parse(wire).log, expected, what);
    for (let a = 1; a < wire.length; a++) {
      assert.deepEqual(parse(wire, [a]).log, expected, `${what}, cut at ${a}`);
      // Three pieces: the head's end and a chunk's size line straddle reads.
      for (let b = a + 1; b < wire.length; b += 7)
        assert.deepEqual(parse(wire, [a, b]).log, expected, `${what}, cut at ${a} and ${b}`);
    }
  }
});

test('two answers in a row on one connection; values of the first do not leak into the second', () => {
  const wire =
    'HTTP/1.1 429 Too Many\r\nRetry-After: 1\r\nContent-Length: 1\r\n\r\nx' +
    'HTTP/1.1 429 Too Many\r\nContent-Length: 1\r\n\r\ny';
  assert.deepEqual(parse(wire, [40]).log, [
    'head 429 keep-alive',
    'body x',
    'end shed=false retry-after=1 date=undefined',
    'head 429 keep-alive',
    'body y',
    'end shed=false retry-after=undefined date=undefined',
  ]);
});

test('a body without length or chunking runs to the end of the stream and closes the connection', () => {
  const wire = 'HTTP/1.1 200 OK\r\n\r\nsome';
  assert.deepEqual(parse(wire, [20]).log, ['head 200', 'body some']);
  assert.deepEqual(parse(wire, [20], true).log, [
    'head 200',
    'body some',
    'end shed=false retry-after=undefined date=undefined',
  ]);
});

test('bytes that are not an HTTP/1.x response are refused', () => {
  for (const wire of [
    'SSH-2.0-OpenSSH\r\n\r\n',
    'HTTP/1.1 2x0 OK\r\n\r\n',
    'HTTP/1.1 200 OK\r\nno colon here\r\n\r\n',
    'HTTP/1.1 200 OK\r\nContent-Length: 1x\r\n\r\n',
    'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  ])
    assert.equal(parse(wire).ok, false, wire);
  assert.equal(parse('HTTP/1.1 200 OK\r\n' + 'x: y\r\n'.repeat(20_000)).ok, false, 'a head beyond 64 KiB');
});
