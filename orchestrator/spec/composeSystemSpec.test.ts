import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { SpecError } from '../../foundation/errors.js';
import { specIssues } from '../../test/helpers/specIssues.js';
import { RUNTIME_PLUGINS } from '../cli/runtimes.js';
import { refuseOn } from '../lab/RuntimePlugin.js';
import { parseExperiment } from './load.js';
import { describeSystem, systemComponents, systemLinks } from './sections/system.js';

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
