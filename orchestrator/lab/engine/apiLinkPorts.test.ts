import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { MAX_REPLICAS } from '../target.js';
import { apiLinkContainerPort, apiLinkOverride, apiLinkSpecs } from './apiLinkPorts.js';

/** The compose file's Toxiproxy links (the dependencies'), beside docker-compose.yml. */
const TOXIPROXY_CONFIG = new URL('../../../../toxiproxy/toxiproxy.json', import.meta.url);

test('the Docker api link: one proxy per replica, named as the triggers name them, dialling its service on the compose network', () => {
  assert.deepEqual(apiLinkSpecs(1), [{ name: 'api', listen: '0.0.0.0:28080', upstream: 'api:8080' }]);
  assert.deepEqual(apiLinkSpecs(3), [
    { name: 'api-0', listen: '0.0.0.0:28080', upstream: 'api:8080' },
    { name: 'api-1', listen: '0.0.0.0:28081', upstream: 'api1:8080' },
    { name: 'api-2', listen: '0.0.0.0:28082', upstream: 'api2:8080' },
  ]);
  assert.equal(apiLinkContainerPort(2), '28082/tcp');
});

test('the api links’ ports never meet the dependency links’ (toxiproxy.json) or the API’s, up to the most replicas; each is published on loopback only', () => {
  const taken = new Set([
    8474,
    ...(JSON.parse(readFileSync(TOXIPROXY_CONFIG, 'utf8')) as { listen: string }[]).map((l) =>
      Number(l.listen.split(':')[1]),
    ),
  ]);
  const specs = apiLinkSpecs(MAX_REPLICAS);
  const ports = specs.map((l) => Number(l.listen.split(':')[1]));
  assert.equal(new Set(ports).size, MAX_REPLICAS);
  for (const p of ports) assert.ok(!taken.has(p), `port ${p}`);
  const published = apiLinkOverride(MAX_REPLICAS).toxiproxy.ports;
  assert.deepEqual(
    published,
    ports.map((p) => `127.0.0.1::${p}`),
  );
});
