import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { isBenchError } from '../../../foundation/errors.js';
import { MAX_REPLICAS } from '../target.js';
import {
  apiPortBase,
  apiService,
  readApiService,
  replicaOfService,
  replicaOverride,
  replicaPortsProblem,
  servicesOf,
  undoRecipe,
} from './replicas.js';

const api = readApiService();

test('one api replica needs no override: the lab is docker-compose.yml alone', () => {
  assert.equal(
    replicaOverride(api, 1, 8080, () => 'x'),
    undefined,
  );
});

test('the override adds api1…api(N-1): a copy of api with its own flags and port, no build section', () => {
  const o = replicaOverride(api, 3, 18080, (i) => `--workers 4 --seed ${100 + i}`)!;
  assert.deepEqual(Object.keys(o.services), ['api1', 'api2']);
  for (const i of [1, 2]) {
    const s = o.services[`api${i}`]!;
    assert.equal(
      s.command,
      `dist/services/api/main.js --host 0.0.0.0 --port 8080 --workers 4 --seed ${100 + i}`,
    );
    assert.deepEqual(s.ports, [`127.0.0.1:${18080 + i}:8080`]);
    assert.equal(s.build, undefined, 'one image for every replica: none is built twice');
    // What makes it the api: same image, health check, restart policy and dependencies.
    assert.equal(s.image, api.image);
    assert.deepEqual(s.healthcheck, api.healthcheck);
    assert.equal(s.restart, 'unless-stopped');
    assert.deepEqual(s.depends_on, api.depends_on);
  }
  // The health check came through the compose file's merge key (`<<: *health`).
  assert.equal((o.services.api1!.healthcheck as { interval?: string }).interval, '10s');
});

test('flags are taken literally, never as replacement patterns', () => {
  const o = replicaOverride(api, 2, 8080, () => "--x $& $' $1")!;
  assert.match(o.services.api1!.command as string, / --x \$& \$' \$1$/);
});

test('replicas past port 65535 are refused, naming the ports and the variable', () => {
  assert.equal(replicaPortsProblem(16, 65520), undefined);
  assert.match(
    replicaPortsProblem(16, 65521)!,
    /16 api replicas publish ports 65521 to 65536 \(METABENCH_API_PORT \+ replica\), past port 65535: set METABENCH_API_PORT to 65520 or lower/,
  );
  assert.throws(
    () => replicaOverride(api, 3, 65534, () => ''),
    (e: unknown) => isBenchError(e) && e.code === 'E_LAB_PREFLIGHT' && /past port 65535/.test(e.message),
  );
});

test('a compose file whose api takes no METABENCH_API_FLAGS cannot carry replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-replicas-compose-'));
  const file = join(dir, 'compose.yml');
  writeFileSync(file, 'services:\n  api:\n    image: x\n    command: node main.js\n');
  assert.throws(
    () => replicaOverride(readApiService(file), 2, 8080, () => ''),
    /has no \$\{METABENCH_API_FLAGS\}/,
  );
});

test('the api port base: the environment over the env file, 8080 by default', () => {
  const dir = mkdtempSync(join(tmpdir(), 'docker-replicas-env-'));
  const env = join(dir, 'offline.env');
  writeFileSync(env, '# ports\nMETABENCH_API_PORT=18500\n');
  assert.equal(apiPortBase({}), 8080);
  assert.equal(apiPortBase({}, env), 18500);
  assert.equal(apiPortBase({ METABENCH_API_PORT: '19000' }, env), 19000);
  assert.throws(
    () => apiPortBase({ METABENCH_API_PORT: 'eighty' }),
    /METABENCH_API_PORT=eighty is not a port/,
  );
});

test('a target maps to the containers it acts on: api all replicas, api[i] one, others their service', () => {
  assert.deepEqual(servicesOf('api', 1), ['api']);
  assert.deepEqual(servicesOf('api', 3), ['api', 'api1', 'api2']);
  assert.deepEqual(servicesOf('api[0]', 3), ['api']);
  assert.deepEqual(servicesOf('api[2]', 3), ['api2']);
  assert.deepEqual(servicesOf('api[0]', 1), ['api']);
  assert.deepEqual(servicesOf('llm', 3), ['llm-stub']);
  assert.deepEqual(servicesOf('postgres', 3), ['postgres']);
  assert.throws(
    () => servicesOf('api[3]', 3),
    (e: unknown) =>
      isBenchError(e) &&
      e.code === 'E_LAB' &&
      /the lab runs 3 api replicas, api\[0\] to api\[2\]/.test(e.message),
  );
});

test('replica services and their indices round-trip; other services are no replica', () => {
  for (const i of [0, 1, 9, 15]) assert.equal(replicaOfService(apiService(i)), i);
  for (const s of ['api0', 'api01', 'apix', 'redis', 'llm-stub', 'api-1'])
    assert.equal(replicaOfService(s), undefined);
});

test('Prometheus scrapes every replica a lab can run, each its own target: api, then api1 to api15', () => {
  const cfg = parse(
    readFileSync(fileURLToPath(new URL('../../../../prometheus/prometheus.yml', import.meta.url)), 'utf8'),
  ) as {
    scrape_configs: { job_name: string; static_configs: { targets: string[] }[] }[];
  };
  const targets = (job: string): string[] =>
    cfg.scrape_configs.find((j) => j.job_name === job)?.static_configs.flatMap((c) => c.targets) ?? [];
  assert.deepEqual(targets('api'), [`${apiService(0)}:8080`]);
  assert.deepEqual(
    targets('api-replicas'),
    Array.from({ length: MAX_REPLICAS - 1 }, (_, i) => `${apiService(i + 1)}:8080`),
  );
});

test('the journal’s recipes name the exact container(s): api[1] its own, api each replica’s, one api as before', () => {
  const engine = { socketPath: '/var/run/docker.sock' };
  const containers: Record<string, { id: string; name: string }> = {
    api: { id: 'c0', name: 'metabench-api-1' },
    api1: { id: 'c1', name: 'metabench-api1-1' },
    api2: { id: 'c2', name: 'metabench-api2-1' },
    redis: { id: 'cr', name: 'metabench-redis-1' },
  };
  const of = (s: string): { id: string; name: string } => containers[s]!;
  assert.deepEqual(undoRecipe('api[1]', 'unpause', 3, of, engine), {
    kind: 'docker',
    action: 'unpause',
    container: 'c1',
    engine,
    what: 'resume api[1] (docker unpause metabench-api1-1)',
  });
  const all = undoRecipe('api', 'start', 3, of, engine);
  assert.equal(all.kind, 'steps');
  assert.equal(all.what, 'start api again (its 3 replicas)');
  assert.deepEqual(
    all.kind === 'steps' && all.steps.map((s) => [s.kind === 'docker' && s.container, s.what]),
    [
      ['c0', 'start api[0] again (docker start metabench-api-1)'],
      ['c1', 'start api[1] again (docker start metabench-api1-1)'],
      ['c2', 'start api[2] again (docker start metabench-api2-1)'],
    ],
  );
  // One api, and the components without replicas: one call, worded as before replicas existed.
  assert.deepEqual(undoRecipe('api', 'unpause', 1, of, engine), {
    kind: 'docker',
    action: 'unpause',
    container: 'c0',
    engine,
    what: 'resume api (docker unpause metabench-api-1)',
  });
  assert.equal(
    undoRecipe('redis', 'start', 3, of, engine).what,
    'start redis again (docker start metabench-redis-1)',
  );
  assert.throws(() => undoRecipe('api[3]', 'unpause', 3, of, engine), /api\[0\] to api\[2\]/);
});
