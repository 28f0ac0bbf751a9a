import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressToward, seenFrom } from '../engine/seenFrom.js';
import { clientScrapeFor, parseMetricsAddress } from './clientScrape.js';

test('--metrics-address: HOST:PORT (IPv6 in brackets); "any" addresses and bad ports refused, naming the flag', () => {
  assert.deepEqual(parseMetricsAddress('192.0.2.10:9464'), { host: '192.0.2.10', port: 9464 });
  assert.deepEqual(parseMetricsAddress('orchestrator.lan:19464'), { host: 'orchestrator.lan', port: 19464 });
  assert.deepEqual(parseMetricsAddress('[2001:db8::1]:9464'), { host: '2001:db8::1', port: 9464 });
  for (const bad of ['192.0.2.10', '192.0.2.10:0', '192.0.2.10:70000', ':9464', '2001:db8::1:9464'])
    assert.throws(() => parseMetricsAddress(bad), /--metrics-address takes HOST:PORT/, bad);
  assert.throws(() => parseMetricsAddress('0.0.0.0:9464'), /must be one of this machine's addresses/);
  assert.throws(() => parseMetricsAddress('[::]:9464'), /must be one of this machine's addresses/);
});

test('the address an engine sees: none for a local socket; the route’s source address toward a tcp:// engine', async () => {
  assert.equal(await seenFrom({ socketPath: '/var/run/docker.sock' }), undefined);
  assert.equal(await seenFrom({ url: 'http://127.0.0.1:2375' }), '127.0.0.1');
  assert.equal(await addressToward('127.0.0.1'), '127.0.0.1');
});

test('client scrape: the given address or the one the engine sees, each time with a fresh token; none on a local socket', async () => {
  const a = await clientScrapeFor({ socketPath: '/x' }, '192.0.2.10:9464', 9464);
  const b = await clientScrapeFor({ socketPath: '/x' }, '192.0.2.10:9464', 9464);
  assert.equal(a?.address, '192.0.2.10:9464');
  assert.match(a!.token, /^[A-Za-z0-9_-]{32}$/);
  assert.notEqual(a!.token, b!.token);
  assert.equal(await clientScrapeFor({ socketPath: '/x' }, undefined, 9464), undefined);
  assert.equal(
    (await clientScrapeFor({ url: 'http://127.0.0.1:2375' }, undefined, 19464))?.address,
    '127.0.0.1:19464',
  );
});
