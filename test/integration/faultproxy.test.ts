import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Toxiproxy, ToxiproxyError, type Latency } from 'toxiproxy-node-client';
import { startFaultProxy, type FaultProxy } from '../../services/faultproxy/server.js';
import {
  connectTo,
  echoRoundTrip,
  echoServer,
  http,
  sleep,
  tcpServer,
  waitUntil,
  watch,
} from '../helpers/sockets.js';

// The fault proxy in this process, an echo server behind it, loopback only.
let fp: FaultProxy;
let echo: { port: number; close(): Promise<void> };
let tp: Toxiproxy;
const api = (method: string, path: string, body?: string, headers?: Record<string, string>) =>
  http(fp.url, method, path, body, headers);
const TEXT = 'text/plain; charset=utf-8';

before(async () => {
  fp = await startFaultProxy({ host: '127.0.0.1', port: 0, seed: 42 });
  echo = await echoServer();
  tp = new Toxiproxy(fp.url);
});

after(async () => {
  await fp.close();
  await echo.close();
});

async function rejectsWithStatus(p: Promise<unknown>, status: number): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof ToxiproxyError, String(err));
    assert.equal(err.message, `Request failed with status code ${status}`);
    return true;
  });
}

/** Asserts a Toxiproxy error answer: status, the JSON body with its newline, and Go's http.Error headers. */
function assertApiError(
  r: { status: number; headers: Record<string, string>; text: string },
  status: number,
  error: string,
) {
  assert.equal(r.status, status, r.text);
  assert.equal(r.text, `${JSON.stringify({ error, status })}\n`);
  assert.equal(r.headers['content-type'], TEXT);
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
}

describe('Toxiproxy API compatibility (toxiproxy-node-client and raw HTTP)', () => {
  test('a full cycle through toxiproxy-node-client', async () => {
    assert.equal(await tp.getVersion(), '{"version": "2.12.0"}\n');

    const redis = await tp.createProxy({
      name: 'redis',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${echo.port}`,
    });
    assert.equal(redis.name, 'redis');
    assert.equal(redis.enabled, true);
    assert.match(redis.listen, /^127\.0\.0\.1:\d+$/);
    assert.notEqual(redis.listen, '127.0.0.1:0', 'listen is the resolved address');

    await rejectsWithStatus(
      tp.createProxy({ name: 'redis', listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` }),
      409,
    );

    const toxic = await redis.addToxic<Latency>({
      name: 'slow',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 100, jitter: 10 },
    });
    assert.deepEqual(toxic.toJson(), {
      name: 'slow',
      type: 'latency',
      stream: 'downstream',
      toxicity: 1,
      attributes: { latency: 100, jitter: 10 },
    });
    const updated = await toxic.update({ ...toxic.toJson(), attributes: { latency: 250 } as Latency });
    assert.deepEqual(updated.attributes, { latency: 250, jitter: 10 }, 'attributes merge: jitter kept');
    assert.deepEqual((await redis.getToxic<Latency>('slow')).attributes, { latency: 250, jitter: 10 });

    const all = await tp.getAll();
    assert.deepEqual(Object.keys(all), ['redis']);

    await updated.remove();
    await rejectsWithStatus(redis.getToxic('slow'), 404);

    const disabled = await redis.update({ enabled: false, listen: redis.listen, upstream: redis.upstream });
    assert.equal(disabled.enabled, false);
    await tp.reset();
    assert.equal((await tp.get('redis')).enabled, true, 'reset re-enables');

    const populated = await tp.populate([
      { name: 'redis', listen: redis.listen, upstream: redis.upstream },
      { name: 'pg', listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}`, enabled: false },
    ]);
    assert.deepEqual(Object.keys(populated).sort(), ['pg', 'redis']);
    assert.equal(populated.pg!.enabled, false);

    await rejectsWithStatus(tp.get('nope'), 404);
    await (await tp.get('pg')).remove();
    await (await tp.get('redis')).remove();
    assert.deepEqual(await tp.getAll(), {});
  });

  test('raw HTTP: status codes, bodies and headers as Toxiproxy sends them', async () => {
    const up = `127.0.0.1:${echo.port}`;
    let r = await api('GET', '/proxies');
    assert.equal(r.status, 200);
    assert.equal(r.text, '{}');
    assert.equal(r.headers['content-type'], 'application/json');
    assert.match(r.headers['x-toxiproxy-request-id'] ?? '', /^[0-9a-v]{20}$/);

    r = await api('POST', '/proxies', JSON.stringify({ name: 'db', listen: '127.0.0.1:0', upstream: up }));
    assert.equal(r.status, 201);
    const created = JSON.parse(r.text) as { listen: string };
    assert.equal(
      r.text,
      `{"name":"db","listen":"${created.listen}","upstream":"${up}","enabled":true,"Logger":{},"toxics":[]}`,
    );
    assertApiError(
      await api('POST', '/proxies', JSON.stringify({ name: 'db', listen: '127.0.0.1:0', upstream: up })),
      409,
      'proxy already exists',
    );
    assertApiError(
      await api('POST', '/proxies', JSON.stringify({ upstream: up })),
      400,
      'missing required field: name',
    );
    assertApiError(await api('POST', '/proxies', '{"name":"x"}'), 400, 'missing required field: upstream');
    assertApiError(await api('POST', '/proxies', ''), 400, 'bad request body: EOF');
    assertApiError(
      await api('POST', '/proxies', '{"name":"x","upstream":5}'),
      400,
      'bad request body: json: cannot unmarshal number into Go struct field Proxy.upstream of type string',
    );
    // Go matches keys case-insensitively.
    r = await api(
      'POST',
      '/proxies',
      `{"Name":"ci","Listen":"127.0.0.1:0","Upstream":"${up}","Enabled":false}`,
    );
    assert.equal(r.status, 201);
    assert.equal((JSON.parse(r.text) as { enabled: boolean }).enabled, false);

    // Toxics: created with 200 (not 201), defaults filled in.
    r = await api('POST', '/proxies/db/toxics', '{"type":"latency","attributes":{"latency":50}}');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(
      r.text,
      '{"attributes":{"latency":50,"jitter":0},"name":"latency_downstream","type":"latency","stream":"downstream","toxicity":1}',
    );
    r = await api(
      'POST',
      '/proxies/db/toxics',
      '{"type":"bandwidth","stream":"UpStream","toxicity":0.1,"attributes":{"rate":64}}',
    );
    assert.equal(
      r.text,
      '{"attributes":{"rate":64},"name":"bandwidth_UpStream","type":"bandwidth","stream":"UpStream","toxicity":0.1}',
      'stream is stored as given, the default name uses it, toxicity prints as a float32',
    );
    assertApiError(
      await api('POST', '/proxies/db/toxics', '{"type":"latency"}'),
      409,
      'toxic already exists',
    );
    assertApiError(await api('POST', '/proxies/db/toxics', '{"type":"down"}'), 400, 'invalid toxic type');
    assertApiError(
      await api('POST', '/proxies/db/toxics', '{"type":"latency","stream":"sideways"}'),
      400,
      'stream was invalid, can be either upstream or downstream',
    );
    assertApiError(
      await api('POST', '/proxies/db/toxics', '{"name":"x","type":"timeout","attributes":{"timeout":"1s"}}'),
      400,
      'bad request body: json: cannot unmarshal string into Go struct field TimeoutToxic.attributes.timeout of type int64',
    );
    assertApiError(await api('POST', '/proxies/nope/toxics', '{"type":"latency"}'), 404, 'proxy not found');

    // Listing: upstream toxics first, then downstream.
    r = await api('GET', '/proxies/db/toxics');
    assert.deepEqual(
      (JSON.parse(r.text) as { name: string }[]).map((t) => t.name),
      ['bandwidth_UpStream', 'latency_downstream'],
    );
    r = await api(
      'PATCH',
      '/proxies/db/toxics/latency_downstream',
      '{"attributes":{"jitter":5},"toxicity":0.5}',
    );
    assert.equal(r.status, 200);
    assert.equal(
      r.text,
      '{"attributes":{"latency":50,"jitter":5},"name":"latency_downstream","type":"latency","stream":"downstream","toxicity":0.5}',
    );
    r = await api('POST', '/proxies/db/toxics/latency_downstream', '{"type":"timeout","stream":"upstream"}');
    assert.equal(JSON.parse(r.text).type, 'latency', 'type and stream cannot change');
    assertApiError(await api('GET', '/proxies/db/toxics/nope'), 404, 'toxic not found');
    assertApiError(await api('PATCH', '/proxies/db/toxics/nope', '{}'), 404, 'toxic not found');
    assertApiError(await api('DELETE', '/proxies/db/toxics/nope'), 404, 'toxic not found');
    assertApiError(await api('GET', '/proxies/nope/toxics/x'), 404, 'proxy not found');
    r = await api('DELETE', '/proxies/db/toxics/latency_downstream');
    assert.equal(r.status, 204);
    assert.equal(r.text, '');

    // Proxy update: partial body, PATCH or POST.
    r = await api('PATCH', '/proxies/db', '{"enabled":false}');
    assert.equal(r.status, 200);
    assert.equal((JSON.parse(r.text) as { enabled: boolean }).enabled, false);
    assertApiError(await api('PATCH', '/proxies/nope', '{}'), 404, 'proxy not found');

    // Populate: validation first (nothing created), then keep-or-replace.
    r = await api('POST', '/populate', JSON.stringify([{ name: 'a', upstream: up }, { name: 'b' }]));
    assert.equal(r.status, 400);
    assert.equal(r.headers['content-type'], 'application/json');
    assert.equal(
      r.text,
      '{"error":"missing required field: upstream at proxy 2","status":400,"proxies":null}',
    );
    assertApiError(await api('GET', '/proxies/a'), 404, 'proxy not found');
    r = await api('POST', '/populate', '[]');
    assert.equal(r.status, 201);
    assert.equal(r.text, '{"proxies":null}');
    r = await api('POST', '/populate', JSON.stringify([{ name: 'a', listen: '127.0.0.1:0', upstream: up }]));
    assert.equal(r.status, 201);
    assert.match(r.text, /^\{"proxies":\[\{"name":"a","listen":"127\.0\.0\.1:\d+","upstream"/);
    // The same entry again keeps the proxy and its toxics; a changed upstream replaces it.
    const aListen = (JSON.parse(r.text) as { proxies: { listen: string }[] }).proxies[0]!.listen;
    await api('POST', '/proxies/a/toxics', '{"type":"latency"}');
    await api(
      'POST',
      '/populate',
      JSON.stringify([{ name: 'a', listen: aListen, upstream: up, enabled: false }]),
    );
    r = await api('GET', '/proxies/a');
    assert.equal((JSON.parse(r.text) as { toxics: unknown[]; enabled: boolean }).toxics.length, 1);
    assert.equal(
      (JSON.parse(r.text) as { enabled: boolean }).enabled,
      true,
      'kept untouched, enabled included',
    );
    await api('POST', '/populate', JSON.stringify([{ name: 'a', listen: aListen, upstream: `127.0.0.1:1` }]));
    r = await api('GET', '/proxies/a');
    assert.equal((JSON.parse(r.text) as { toxics: unknown[] }).toxics.length, 0, 'replaced: toxics gone');
    // A listen failure is a 500 with Go's error text, and what was created so far stays.
    r = await api(
      'POST',
      '/populate',
      JSON.stringify([
        { name: 'c', listen: '127.0.0.1:0', upstream: up },
        { name: 'd', listen: aListen, upstream: up },
      ]),
    );
    assert.equal(r.status, 500);
    const failed = JSON.parse(r.text) as { error: string; status: number; proxies: { name: string }[] };
    assert.equal(failed.error, `listen tcp ${aListen}: bind: address already in use`);
    assert.deepEqual(
      failed.proxies.map((p) => p.name),
      ['c'],
    );

    // Reset: every toxic gone, every proxy enabled.
    await api('POST', '/proxies/c/toxics', '{"type":"latency"}');
    r = await api('POST', '/reset');
    assert.equal(r.status, 204);
    const proxies = JSON.parse((await api('GET', '/proxies')).text) as Record<
      string,
      { enabled: boolean; toxics: unknown[] }
    >;
    assert.deepEqual(Object.keys(proxies), ['a', 'c', 'ci', 'db'], 'keys sorted like a Go map');
    assert.ok(Object.values(proxies).every((p) => p.enabled && p.toxics.length === 0));

    // Router and middleware behaviour.
    r = await api('GET', '/nope');
    assert.equal(r.status, 404);
    assert.equal(r.text, '404 page not found\n');
    r = await api('PUT', '/proxies');
    assert.equal(r.status, 405);
    assert.equal(r.text, '');
    r = await api('GET', '/proxies', undefined, { 'user-agent': 'Mozilla/5.0' });
    assert.equal(r.status, 403);
    assert.equal(r.text, 'User agent not allowed\n');
    r = await api('GET', '/version');
    assert.equal(r.headers['content-type'], 'application/json;charset=utf-8');

    for (const name of ['a', 'c', 'ci', 'db'])
      assert.equal((await api('DELETE', `/proxies/${name}`)).status, 204);
    assertApiError(await api('DELETE', '/proxies/db'), 404, 'proxy not found');
  });
});

describe('toxics measured through the proxy on loopback', () => {
  let port: number;
  const name = 'link';

  before(async () => {
    const p = await tp.createProxy({ name, listen: '127.0.0.1:0', upstream: `127.0.0.1:${echo.port}` });
    port = Number(p.listen.split(':')[1]);
  });
  after(async () => {
    await api('DELETE', `/proxies/${name}`);
  });
  const addToxic = async (body: object) => {
    const r = await api('POST', `/proxies/${name}/toxics`, JSON.stringify(body));
    assert.equal(r.status, 200, r.text);
  };
  const removeToxic = async (toxic: string) =>
    assert.equal((await api('DELETE', `/proxies/${name}/toxics/${toxic}`)).status, 204);

  test('no toxic: bytes pass unchanged both ways', async () => {
    const s = await connectTo(port);
    const payload = 'x'.repeat(200_000);
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.write(payload);
    await waitUntil('the echo', () => got.length === payload.length);
    assert.equal(got, payload);
    s.destroy();
  });

  // The timing checks below assert lower bounds exactly (a stall only delays) and upper
  // bounds halfway to the wrong behaviour: a loaded machine stalls this process for tens or
  // hundreds of ms, while the faults asserted differ by hundreds (300 ms once, not twice;
  // echoes 150 ms apart as written, not 300 apart as stacked latency would space them).
  test('latency 300 ms adds 300 ms to each chunk, counted from its own arrival', async () => {
    const s = await connectTo(port);
    const direct = await echoRoundTrip(s, 'warm');
    await addToxic({ name: 'lat', type: 'latency', attributes: { latency: 300 } });
    const rtt = await echoRoundTrip(s, 'ping');
    assert.ok(rtt >= 300 && rtt < 600, `round trip ${rtt.toFixed(1)} ms (direct ${direct.toFixed(1)})`);

    // Three writes 150 ms apart each come back at least 300 ms after their own write, and
    // no further apart than they were written; stacked latency (each chunk waiting out the
    // one before) would space the echoes 300 ms apart, a to c 600 ms.
    const t0 = performance.now();
    const log = watch(s, t0);
    const writtenAt: number[] = [];
    for (const m of ['a', 'b', 'c']) {
      writtenAt.push(performance.now() - t0);
      s.write(m);
      await sleep(150);
    }
    await waitUntil('three echoes', () => log.chunks.map((c) => c.text).join('').length === 3);
    const echoedAt = (m: string): number => log.chunks.find((c) => c.text.includes(m))!.atMs;
    const delays = ['a', 'b', 'c'].map((m, i) => echoedAt(m) - writtenAt[i]!);
    const shown = delays.map((d) => d.toFixed(1)).join(', ');
    for (const d of delays) assert.ok(d >= 299, `echo delays ${shown} ms: one under the latency`);
    const spread = echoedAt('c') - echoedAt('a');
    assert.ok(spread < 450, `echo delays ${shown} ms, a to c ${spread.toFixed(1)} ms: latency stacked`);
    await removeToxic('lat');
    s.destroy();
  });

  test('latency on the upstream stream delays what the client sends', async () => {
    const sink = await tcpServer((c) => c.on('data', () => c.write('seen')));
    const p = await tp.createProxy({ name: 'up', listen: '127.0.0.1:0', upstream: `127.0.0.1:${sink.port}` });
    await api(
      'POST',
      '/proxies/up/toxics',
      '{"type":"latency","stream":"upstream","attributes":{"latency":300}}',
    );
    const s = await connectTo(Number(p.listen.split(':')[1]));
    const rtt = await echoRoundTrip(s, 'seen');
    assert.ok(rtt >= 300 && rtt < 600, `round trip ${rtt.toFixed(1)} ms`);
    s.destroy();
    await p.remove();
    await sink.close();
  });

  test('toxicity 0 leaves connections alone', async () => {
    await addToxic({ name: 'never', type: 'latency', toxicity: 0, attributes: { latency: 3000 } });
    const s = await connectTo(port);
    const rtt = await echoRoundTrip(s, 'ping');
    assert.ok(rtt < 1500, `round trip ${rtt.toFixed(1)} ms`);
    s.destroy();
    await removeToxic('never');
  });

  test('removing a latency toxic forwards the data it holds at once', async () => {
    const s = await connectTo(port);
    await echoRoundTrip(s, 'warm');
    await addToxic({ name: 'long', type: 'latency', attributes: { latency: 3000 } });
    const done = echoRoundTrip(s, 'held');
    await sleep(100);
    await removeToxic('long');
    const rtt = await done;
    assert.ok(rtt >= 100 && rtt < 1000, `held data came back after ${rtt.toFixed(1)} ms, not 3000`);
    s.destroy();
  });

  test('bandwidth 100 KB/s takes about a second for 100 KB', async () => {
    let received = 0;
    let lastAt = 0;
    const t0 = performance.now();
    const sink = await tcpServer((c) =>
      c.on('data', (d: Buffer) => {
        received += d.length;
        lastAt = performance.now() - t0;
      }),
    );
    const p = await tp.createProxy({ name: 'bw', listen: '127.0.0.1:0', upstream: `127.0.0.1:${sink.port}` });
    await api(
      'POST',
      '/proxies/bw/toxics',
      '{"type":"bandwidth","stream":"upstream","attributes":{"rate":100}}',
    );
    const s = await connectTo(Number(p.listen.split(':')[1]));
    const start = performance.now() - t0;
    s.write(Buffer.alloc(100_000));
    await waitUntil('100 KB through', () => received === 100_000, 5000);
    const tookMs = lastAt - start;
    assert.ok(tookMs >= 900 && tookMs < 2000, `100 KB at 100 KB/s took ${tookMs.toFixed(0)} ms`);
    s.destroy();
    await p.remove();
    await sink.close();
  });

  test('timeout holds the data, then closes the connection after `timeout` ms', async () => {
    await addToxic({ name: 'to', type: 'timeout', attributes: { timeout: 300 } });
    const s = await connectTo(port);
    const log = watch(s);
    s.write('anyone?');
    await waitUntil('the close', () => log.closedAtMs !== undefined, 3000);
    assert.deepEqual(log.chunks, [], 'nothing came back');
    assert.ok(
      log.closedAtMs! >= 290 && log.closedAtMs! < 1500,
      `closed after ${log.closedAtMs!.toFixed(0)} ms`,
    );
    await removeToxic('to');
  });

  test('removing a timeout toxic closes the connections it black-holed', async () => {
    await addToxic({ name: 'hole', type: 'timeout', attributes: { timeout: 0 } });
    const s = await connectTo(port);
    const log = watch(s);
    s.write('lost');
    await sleep(100);
    assert.equal(log.closedAtMs, undefined);
    await removeToxic('hole');
    await waitUntil('the close', () => log.closedAtMs !== undefined, 2000);
    assert.deepEqual(log.chunks, []);
  });

  test('reset_peer resets the connection (ECONNRESET) after the first data', async () => {
    await addToxic({ name: 'rst', type: 'reset_peer', attributes: { timeout: 100 } });
    const s = await connectTo(port);
    const log = watch(s);
    await sleep(150);
    assert.equal(log.closedAtMs, undefined, 'no reset before data flows');
    const t0 = performance.now();
    s.write('hello');
    await waitUntil('the reset', () => log.closedAtMs !== undefined, 2000);
    assert.equal(log.error, 'ECONNRESET');
    assert.ok(performance.now() - t0 >= 95, 'after the toxic timeout');
    await removeToxic('rst');
  });

  test('slow_close delays the close by `delay` ms; the data is not delayed', async () => {
    const bye = await tcpServer((c) => c.end('bye'));
    const p = await tp.createProxy({ name: 'sc', listen: '127.0.0.1:0', upstream: `127.0.0.1:${bye.port}` });
    await api('POST', '/proxies/sc/toxics', '{"type":"slow_close","attributes":{"delay":400}}');
    const s = await connectTo(Number(p.listen.split(':')[1]));
    const log = watch(s);
    await waitUntil('the close', () => log.closedAtMs !== undefined, 3000);
    assert.equal(log.chunks.map((c) => c.text).join(''), 'bye');
    assert.ok(log.chunks[0]!.atMs < 200, `data after ${log.chunks[0]!.atMs.toFixed(0)} ms`);
    assert.ok(log.closedAtMs! >= 390, `closed after ${log.closedAtMs!.toFixed(0)} ms`);
    await p.remove();
    await bye.close();
  });

  test('slicer delivers one write as many small pieces', async () => {
    const burst = await tcpServer((c) => c.write(Buffer.alloc(1000, 97)));
    const p = await tp.createProxy({
      name: 'sl',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${burst.port}`,
    });
    await api(
      'POST',
      '/proxies/sl/toxics',
      '{"type":"slicer","attributes":{"average_size":100,"size_variation":20,"delay":5000}}',
    );
    const s = await connectTo(Number(p.listen.split(':')[1]));
    const log = watch(s);
    await waitUntil('1000 bytes', () => log.chunks.reduce((n, c) => n + c.bytes, 0) === 1000, 3000);
    assert.ok(log.chunks.length >= 6, `${log.chunks.length} pieces`);
    assert.ok(log.chunks.every((c) => c.bytes <= 120));
    s.destroy();
    await p.remove();
    await burst.close();
  });

  test('limit_data lets `bytes` through, then closes', async () => {
    const burst = await tcpServer((c) => c.write(Buffer.alloc(1000, 98)));
    const p = await tp.createProxy({
      name: 'ld',
      listen: '127.0.0.1:0',
      upstream: `127.0.0.1:${burst.port}`,
    });
    await api('POST', '/proxies/ld/toxics', '{"type":"limit_data","attributes":{"bytes":100}}');
    const s = await connectTo(Number(p.listen.split(':')[1]));
    const log = watch(s);
    await waitUntil('the close', () => log.closedAtMs !== undefined, 3000);
    assert.equal(
      log.chunks.reduce((n, c) => n + c.bytes, 0),
      100,
    );
    await p.remove();
    await burst.close();
  });

  test('a disabled proxy refuses new connections and closes open ones; enabling restores it', async () => {
    const open = await connectTo(port);
    const log = watch(open);
    await echoRoundTrip(open, 'hi');
    assert.equal((await api('PATCH', `/proxies/${name}`, '{"enabled":false}')).status, 200);
    await waitUntil('the open connection closed', () => log.closedAtMs !== undefined, 2000);
    await assert.rejects(connectTo(port), (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED');
    assert.equal((await api('PATCH', `/proxies/${name}`, '{"enabled":true}')).status, 200);
    const again = await connectTo(port);
    assert.ok((await echoRoundTrip(again, 'back')) < 1000);
    again.destroy();
  });
});
