import { test } from 'node:test';
import assert from 'node:assert/strict';
import { specIssues } from '../../test/helpers/specIssues.js';
import { labExperiment } from '../../test/helpers/labYaml.js';
import { labConfig } from '../lab/labConfig.js';
import { apiLinkProxy, isApiLinkProxy, parseApiLink, proxiesOfLink } from '../lab/apiLink.js';
import { createTrigger } from '../trigger/registry.js';
import { parseExperiment } from './load.js';

const yaml = labExperiment;

const LINK_TOXICS = [
  'kind: latency, link: LINK, latency: 100ms, duration: 2s',
  'kind: bandwidth, link: LINK, rate: 10, duration: 2s',
  'kind: timeout, link: LINK, duration: 2s',
  'kind: slow-close, link: LINK, delay: 100ms, duration: 2s',
  'kind: reset-peer, link: LINK, timeout: 0ms, duration: 2s',
  'kind: loss, link: LINK, probability: 5%, duration: 2s',
  'kind: partition, link: LINK, duration: 2s',
];

test('every link kind accepts link api and api[i]; the trigger acts on each replica’s proxy, or the one named', () => {
  for (const line of LINK_TOXICS)
    for (const link of ['api', "'api[1]'"]) {
      const e = parseExperiment(yaml('replicas: 2, ', line.replace('LINK', link)), 'ok.yaml');
      const t = createTrigger(e.schedule.triggers[0]!);
      assert.equal(t.target, `link:${link.replace(/'/g, '')}`, line);
    }
  assert.deepEqual(proxiesOfLink('api', 3), ['api-0', 'api-1', 'api-2']);
  assert.deepEqual(proxiesOfLink('api[2]', 3), ['api-2']);
  assert.deepEqual(proxiesOfLink('api', 1), ['api']);
  assert.deepEqual(proxiesOfLink('api[0]', 1), ['api']);
  assert.deepEqual(proxiesOfLink('redis', 3), ['redis']);
  assert.throws(
    () => proxiesOfLink('api[3]', 2),
    /link api\[3\] names the link to api replica 3, but the lab runs 2/,
  );
  assert.deepEqual(
    [parseApiLink('api'), parseApiLink('api[4]'), parseApiLink('apis')],
    [{}, { replica: 4 }, undefined],
  );
  assert.deepEqual(['api', 'api-0', 'api-12', 'api-01', 'redis'].map(isApiLinkProxy), [
    true,
    true,
    true,
    false,
    false,
  ]);
  assert.equal(apiLinkProxy(1, 2), 'api-1');
});

test('link: api[3] in a lab of 2 replicas is refused with its file, line and field', () => {
  const issues = specIssues(
    yaml('replicas: 2, ', "kind: latency, link: 'api[3]', latency: 100ms, duration: 2s"),
    'r.yaml',
  );
  assert.equal(issues.length, 1);
  assert.deepEqual(
    [issues[0]!.file, issues[0]!.line, issues[0]!.path],
    ['r.yaml', 11, 'schedule.trigger.link'],
  );
  assert.match(
    issues[0]!.message,
    /api\[3\] names the link to api replica 3, but the lab runs 2 api replicas: api\[0\] to api\[1\]/,
  );
  const one = specIssues(yaml('', "kind: partition, link: 'api[1]', duration: 2s"), 'one.yaml');
  assert.match(
    one[0]!.message,
    /the lab runs one api \(lab\.api\.replicas is 1 or absent\): write link: api/,
  );
  // Only the api link has one per replica.
  const redis = specIssues(yaml('', "kind: partition, link: 'redis[0]', duration: 2s"), 'redis.yaml');
  assert.equal(redis[0]!.path, 'schedule.trigger.link');
  assert.match(
    redis[0]!.message,
    /only the api link has one link per replica \(api\[i\]\); write link: redis/,
  );
});

test('the api link is in the clients’ path only when a trigger names it or lab.api.link says so', () => {
  const plain = parseExperiment(yaml('', 'kind: pause, target: api, duration: 2s'), 'p.yaml');
  assert.equal('apiLink' in labConfig(plain, 1), false, 'a plain run keeps its direct path');
  assert.equal('link' in plain.lab!.api, false, 'nothing is filled in');
  const named = parseExperiment(yaml('', 'kind: latency, link: api, latency: 5ms, duration: 2s'), 'n.yaml');
  assert.equal(labConfig(named, 1).apiLink, true);
  const control = parseExperiment(yaml('link: true, ', 'kind: pause, target: api, duration: 2s'), 'c.yaml');
  assert.equal(labConfig(control, 1).apiLink, true, 'a control run on the same path');
  const off = specIssues(
    yaml('link: false, ', 'kind: latency, link: api, latency: 5ms, duration: 2s'),
    'off.yaml',
  );
  assert.equal(off[0]!.path, 'schedule.trigger.link');
  assert.match(off[0]!.message, /lab\.api\.link: false leaves out/);
});

test('link: api on your own system is refused by field: metabench puts no fault proxy before its entry', () => {
  const processes = `name: s
system:
  processes:
    - { name: back, command: node back.js, port: 18091, health: /health }
    - { name: front, command: node front.js, port: 18090, health: /health }
  entry: front
  path: /work
  links: [{ from: front, to: back, env: BACK_ADDR }]
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: latency, link: api, latency: 5ms, duration: 2s }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;
  const issues = specIssues(processes, 'sys.yaml');
  assert.deepEqual([issues[0]!.file, issues[0]!.path], ['sys.yaml', 'schedule.trigger.link']);
  assert.match(
    issues[0]!.message,
    /link api is the built-in lab's link between the clients and its api: for your own system metabench puts no fault proxy between the load and its entry \(system\.entry\)/,
  );
  // A link the system declares under the name api is its own, and accepted.
  parseExperiment(processes.replace('to: back, env', 'to: back, name: api, env'), 'own.yaml');
});
