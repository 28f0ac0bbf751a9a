import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBenchError } from '../../../foundation/errors.js';
import {
  composeSystemOverride,
  composeSystemProblems,
  PROXY_SERVICE,
  proxyImage,
  readComposeServices,
  serviceEnvironment,
  type ComposeSystemConfig,
} from './composeSystem.js';

// The integration test's own two services (front calls back at BACK_URL).
const FIXTURE = fileURLToPath(
  new URL('../../../../test/fixtures/system-compose/compose.yml', import.meta.url),
);

const cfg: ComposeSystemConfig = {
  file: FIXTURE,
  project: 'p',
  entry: { service: 'front', port: 8080, health: '/health' },
  links: [{ name: 'back', service: 'back', port: 9000, env: 'BACK_URL', from: 'front' }],
};

function composeFile(text: string): string {
  const f = join(mkdtempSync(join(tmpdir(), 'metabench-composesys-')), 'compose.yml');
  writeFileSync(f, text);
  return f;
}

test('the override adds the fault proxy, points the dependent at its proxy and publishes on 127.0.0.1 only', () => {
  const o = composeSystemOverride(cfg, readComposeServices(FIXTURE), 'proxy:img');
  assert.deepEqual(o.services[PROXY_SERVICE], {
    image: 'proxy:img',
    command: ['-host=0.0.0.0'],
    ports: ['127.0.0.1::8474'],
  });
  // front's own address of back, rewritten; its other variables untouched (compose merges the maps).
  assert.deepEqual(o.services.front, {
    ports: ['127.0.0.1::8080'],
    environment: { BACK_URL: `http://${PROXY_SERVICE}:21000` },
  });
  assert.equal(o.services.back, undefined);
});

test('a metrics endpoint in the project is published on 127.0.0.1 too: beside the entry’s port, or on its own service', () => {
  const file = readComposeServices(FIXTURE);
  const same = composeSystemOverride(
    { ...cfg, metrics: { service: 'front', port: 9100, path: '/metrics' } },
    file,
    'i',
  );
  assert.deepEqual(same.services.front!.ports, ['127.0.0.1::8080', '127.0.0.1::9100']);
  const other = composeSystemOverride(
    { ...cfg, metrics: { service: 'back', port: 9100, path: '/m' } },
    file,
    'i',
  );
  assert.deepEqual(other.services.back, { ports: ['127.0.0.1::9100'] });
  assert.deepEqual(other.services.front!.ports, ['127.0.0.1::8080']);
  // The entry's own port named as the endpoint is published once.
  const entry = composeSystemOverride(
    { ...cfg, metrics: { service: 'front', port: 8080, path: '/metrics' } },
    file,
    'i',
  );
  assert.deepEqual(entry.services.front!.ports, ['127.0.0.1::8080']);
  assert.throws(
    () => composeSystemOverride({ ...cfg, metrics: { service: 'nope', port: 1, path: '/' } }, file, 'i'),
    (e: unknown) => isBenchError(e) && /system\.metrics\.service: no service "nope"/.test(e.message),
  );
});

test('each link gets its own proxy port; the list form of environment, paths and networks are kept', () => {
  const file = composeFile(`services:
  web:
    image: x
    networks: [inner]
    environment:
      - DB=postgres://db:5432/app?x=db:5432
      - CACHE=cache:6379
  db: { image: x, networks: { inner: {} } }
  cache: { image: x }
networks: { inner: {} }
`);
  const o = composeSystemOverride(
    {
      file,
      project: 'p',
      entry: { service: 'web', port: 80 },
      links: [
        { name: 'db', service: 'db', port: 5432, env: 'DB', from: 'web' },
        { name: 'cache', service: 'cache', port: 6379, env: 'CACHE', from: 'web' },
      ],
    },
    readComposeServices(file),
    'i',
  );
  assert.deepEqual(o.services.web!.environment, {
    DB: `postgres://${PROXY_SERVICE}:21000/app?x=${PROXY_SERVICE}:21000`,
    CACHE: `${PROXY_SERVICE}:21001`,
  });
  assert.deepEqual(o.services[PROXY_SERVICE]!.networks, ['inner']);
});

test('what the file makes impossible is named, field by field, with the line of the dependent', () => {
  const file = composeFile(`services:
  front:
    image: x
    environment: { OTHER: '1', BACK_URL: 'http://elsewhere:9000' }
  back: { image: x }
  ${PROXY_SERVICE}: { image: x }
`);
  const problems = composeSystemProblems(
    {
      entry: { service: 'frontend', port: 8080 },
      links: [
        { name: 'back', service: 'back', port: 9000, env: 'BACK_URL', from: 'front' },
        { name: 'back', service: 'nope', port: 1, env: 'MISSING', from: 'front' },
      ],
    },
    readComposeServices(file),
  );
  const by = Object.fromEntries(problems.map((p) => [p.path.join('.'), p.message]));
  assert.match(by['compose.entry.service']!, /no service "frontend" \(the file's services: front, back/);
  assert.match(by['compose']!, /named metabench-faultproxy/);
  assert.match(
    by['compose.links.0.env']!,
    /BACK_URL of service front \(line 2\) is "http:\/\/elsewhere:9000", which does not name back:9000/,
  );
  assert.match(by['compose.links.1.name']!, /two links are named "back"/);
  assert.match(by['compose.links.1.service']!, /no service "nope"/);
  assert.match(by['compose.links.1.env']!, /service front \(line 2\) sets no MISSING in its environment/);
  assert.throws(
    () =>
      composeSystemOverride(
        { ...cfg, file, entry: { service: 'frontend', port: 1 } },
        readComposeServices(file),
        'i',
      ),
    (e: unknown) =>
      isBenchError(e) && /system\.compose\.entry\.service: no service "frontend"/.test(e.message),
  );
});

test('a file that is missing, not YAML or not a compose file is refused, naming it', () => {
  const missing = join(tmpdir(), 'metabench-no-such-dir', 'compose.yml');
  assert.throws(() => readComposeServices(missing), /no such compose file/);
  assert.throws(() => readComposeServices(composeFile('services: [\n')), /not YAML/);
  assert.throws(() => readComposeServices(composeFile('version: "3"\n')), /no services: section/);
});

test('environment in both forms, as compose reads them', () => {
  assert.deepEqual(serviceEnvironment({ environment: ['A=1', 'B', 'C=x=y'] }), {
    A: '1',
    B: undefined,
    C: 'x=y',
  });
  assert.deepEqual(serviceEnvironment({ environment: { A: 1, B: null } }), { A: '1', B: undefined });
  assert.deepEqual(serviceEnvironment({}), {});
});

test("the fault proxy's image: the environment's, else the env file's, else a clear error", () => {
  const env = composeFile('METABENCH_TOXIPROXY_IMAGE=from/file:1\n');
  assert.equal(proxyImage({ METABENCH_TOXIPROXY_IMAGE: 'from/env:1' }, env), 'from/env:1');
  assert.equal(proxyImage({}, env), 'from/file:1');
  assert.throws(() => proxyImage({}), /set METABENCH_TOXIPROXY_IMAGE or pass --env-file/);
});
