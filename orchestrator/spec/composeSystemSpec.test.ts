import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { SpecError } from '../../foundation/errors.js';
import { specIssues } from '../../test/helpers/specIssues.js';
import { RUNTIME_PLUGINS } from '../cli/runtimes.js';
import { refuseOn } from '../lab/RuntimePlugin.js';
import { parseExperiment } from './load.js';
import { composeMetricsEndpoint, describeSystem, systemComponents, systemLinks } from './sections/system.js';

// The integration test's own compose file: front (entry, BACK_URL: http://back:9000) and back.
const FILE = fileURLToPath(new URL('../../../test/fixtures/system-compose/compose.yml', import.meta.url));

/** An experiment on a compose system whose system.compose section is `compose` (flow style, one line). */
function yaml(compose: string, extra = ''): string {
  return `name: c
system:
  compose: ${compose}${extra}
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 4s
  trigger: { kind: load-spike, factor: 2x, duration: 2s }
  observe: 4s
recovery: { within: 5x, tolerance: 30%, window: 2s, hold: 1s }
`;
}

const OK = `{ file: ${FILE}, entry: { service: front, port: 8080, health: /health }, links: [{ service: back, port: 9000, env: BACK_URL, from: front }] }`;

test('system.compose parses: its components are the file’s services, its links the declared ones', () => {
  const e = parseExperiment(yaml(OK), 'c.yaml');
  assert.equal(e.lab, undefined);
  assert.deepEqual(systemComponents(e.system!), ['front', 'back']);
  assert.deepEqual(systemLinks(e.system!), ['back']);
  assert.match(
    describeSystem(e.system!),
    /compose file .*compose\.yml, run by metabench on the Docker runtime; links front -> back, each through the fault proxy/,
  );
});

test('what the compose file makes impossible is refused, naming the experiment file, line and field', () => {
  const missing = specIssues(
    yaml(`{ file: no/such/compose.yml, entry: { service: front, port: 8080 } }`),
    'c.yaml',
  );
  assert.equal(missing.length, 1);
  assert.equal(missing[0]!.path, 'system.compose.file');
  assert.equal(missing[0]!.line, 3);
  assert.match(missing[0]!.message, /no\/such\/compose\.yml: no such compose file/);

  const wrong = specIssues(
    yaml(
      `{ file: ${FILE}, entry: { service: frontend, port: 8080 }, links: [{ service: back, port: 9001, env: BACK_URL, from: front }] }`,
    ),
    'c.yaml',
  );
  const by = Object.fromEntries(wrong.map((i) => [i.path, i]));
  assert.match(
    by['system.compose.entry.service']!.message,
    /no service "frontend" \(the file's services: front, back\)/,
  );
  assert.match(
    by['system.compose.links.0.env']!.message,
    /BACK_URL of service front \(line \d+\) is "http:\/\/back:9000", which does not name back:9001/,
  );
  for (const i of wrong) assert.equal(i.file, 'c.yaml');

  // The built-in lab's project: this system's compose down would remove the lab's containers.
  const lab = specIssues(yaml(OK.replace(/^\{ /, '{ project: metabench, ')), 'c.yaml');
  assert.equal(lab.length, 1);
  assert.equal(lab[0]!.path, 'system.compose.project');
  assert.equal(lab[0]!.line, 3);
  assert.match(lab[0]!.message, /built-in lab's compose project/);
  assert.equal(
    parseExperiment(yaml(OK.replace(/^\{ /, '{ project: metabench-mine, ')), 'c.yaml').system?.compose
      ?.project,
    'metabench-mine',
  );

  const mixed = specIssues(yaml(OK, `\n  url: http://127.0.0.1:1/`), 'c.yaml');
  assert.match(mixed[0]!.message, /url does not go with compose/);
});

test('only the docker runtime runs a compose system: local and swarm refuse it with the reason, sim too', () => {
  const e = parseExperiment(yaml(OK), 'c.yaml');
  for (const p of RUNTIME_PLUGINS) {
    if (p.name === 'docker') {
      assert.doesNotThrow(() => refuseOn(p, e, 'c.yaml'));
      continue;
    }
    assert.throws(
      () => refuseOn(p, e, 'c.yaml'),
      (err: unknown) =>
        p.name === 'sim'
          ? err instanceof Error
          : err instanceof SpecError &&
            err.issues[0]!.path === 'system.compose' &&
            /runs on the docker runtime \(--runtime docker\)/.test(err.issues[0]!.message),
      p.name,
    );
  }
});

test('system.metrics on a compose system: a service and port of the file (or a url), refused otherwise with the field', () => {
  const mapped = `\n  metrics: { service: front, port: 9100, received: front_requests_received_total }`;
  const e = parseExperiment(yaml(OK, mapped), 'c.yaml');
  assert.deepEqual(composeMetricsEndpoint(e.system!.metrics), {
    service: 'front',
    port: 9100,
    path: '/metrics',
  });
  assert.match(
    describeSystem(e.system!),
    /server metrics from \/metrics on port 9100 of service front \(received = front_requests_received_total\)/,
  );
  // A url the file publishes itself is an endpoint too (then nothing is published for it).
  const byUrl = parseExperiment(yaml(OK, `\n  metrics: { url: http://127.0.0.1:9100/metrics }`), 'c.yaml');
  assert.equal(composeMetricsEndpoint(byUrl.system!.metrics), undefined);

  const issue = (extra: string) => {
    const found = specIssues(yaml(OK, extra), 'c.yaml');
    assert.equal(found.length, 1, JSON.stringify(found));
    return found[0]!;
  };
  const nowhere = issue(`\n  metrics: { received: x_total }`);
  assert.equal(nowhere.path, 'system.metrics');
  assert.match(nowhere.message, /give the endpoint: service and port/);
  const noPort = issue(`\n  metrics: { service: front }`);
  assert.equal(noPort.path, 'system.metrics.port');
  const both = specIssues(
    yaml(OK, `\n  metrics: { url: http://127.0.0.1:1/metrics, service: front, port: 9100 }`),
    'c.yaml',
  );
  assert.deepEqual(
    both.map((i) => i.path),
    ['system.metrics.service', 'system.metrics.port'],
  );
  assert.match(both[0]!.message, /either url or service and port, not both/);
  const unknown = issue(`\n  metrics: { service: frontend, port: 9100 }`);
  assert.equal(unknown.path, 'system.metrics.service');
  assert.equal(unknown.line, 4);
  assert.match(unknown.message, /no service "frontend" \(the file's services: front, back\)/);
});

test('system.metrics off compose: url is required, service and port are refused', () => {
  const url = (metrics: string) => `name: u
system: { url: http://127.0.0.1:1/work, metrics: ${metrics} }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 4s, trigger: { kind: load-spike, factor: 2x, duration: 2s }, observe: 4s }
recovery: { within: 5x, tolerance: 30%, window: 2s, hold: 1s }
`;
  const paths = specIssues(url('{ service: front, port: 9100 }'), 'u.yaml').map((i) => [i.path, i.message]);
  assert.deepEqual(
    paths.map(([p]) => p),
    ['system.metrics.url', 'system.metrics.service', 'system.metrics.port'],
  );
  assert.match(paths[1]![1]!, /service goes with compose/);
  assert.doesNotThrow(() => parseExperiment(url('{ url: http://127.0.0.1:1/metrics }'), 'u.yaml'));
});
