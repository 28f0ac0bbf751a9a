import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LinkClient } from '../links.js';
import { ForwardedLinks } from './forwardedLinks.js';

// The swarm lab's links: the same requests as the docker lab's, but recipes that reach the
// fault proxy through the engine, not at the run's port-forward (gone with the orchestrator).

const via = {
  host: 'toxiproxy',
  port: 8474,
  container: 'c0ffee',
  engine: { socketPath: '/var/run/docker.sock' },
};
const links = new ForwardedLinks(new LinkClient('http://127.0.0.1:41234'), via);

test('forwarded links: a toxic’s and a link’s undo recipes name the path, the proxy on the stack’s network and the control container', () => {
  assert.deepEqual(links.removeToxicRecipe('redis', 'latency 1'), {
    kind: 'http-forwarded',
    method: 'DELETE',
    path: '/proxies/redis/toxics/latency%201',
    host: 'toxiproxy',
    port: 8474,
    container: 'c0ffee',
    engine: { socketPath: '/var/run/docker.sock' },
    what: 'remove toxic latency 1 from link redis',
  });
  const enable = links.enableRecipe('postgres');
  assert.equal(enable.kind, 'http-forwarded');
  assert.deepEqual(enable.kind === 'http-forwarded' && [enable.method, enable.path, enable.body], [
    'POST',
    '/proxies/postgres',
    { enabled: true },
  ]);
  // Nothing of the forward's local address is kept.
  assert.doesNotMatch(JSON.stringify(enable), /41234/);
});
