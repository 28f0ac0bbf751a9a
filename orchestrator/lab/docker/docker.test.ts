import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isBenchError } from '../../../foundation/errors.js';
import { runUndo } from '../../trigger/journal.js';
import { dockerApiFlags, flagsString } from '../engine/apiFlags.js';
import { composeArgs, COMPOSE_FILE } from '../engine/compose.js';
import { interpolate, parseEnvFile, serviceImages } from '../engine/images.js';
import { firstHost } from '../../cli/runtimeOption.js';
import { registerRuntimes } from '../../cli/runtimes.js';
import { dockerClient, PROJECT_LABEL, projectContainers, SERVICE_LABEL } from '../engine/engine.js';

registerRuntimes();

test('the api flags in docker are the local lab’s, with the dependencies behind Toxiproxy’s links', () => {
  const flags = dockerApiFlags({
    workers: 4,
    work: { dist: 'exponential', meanMs: 20 },
    seed: 7,
    mitigations: { queue: 'lifo', shedQueueTimeMs: 50 },
    requestTimeoutMs: 400,
    cache: { ttlS: 3600, prewarm: true, keys: 300, pool: 8, queryDelay: { dist: 'constant', meanMs: 200 } },
  });
  assert.equal(
    flagsString(flags),
    '--workers 4 --work exponential:20ms --seed 7 --queue lifo --shed-queue-time 50 --request-timeout 400 ' +
      '--redis toxiproxy:26379 --postgres toxiproxy:25432 --db-user postgres --db-name postgres ' +
      '--db-pool 8 --db-delay constant:200ms --cache-ttl 3600',
  );
  assert.deepEqual(dockerApiFlags({ workers: 8, work: { dist: 'constant', meanMs: 1 }, seed: 1 }).slice(-2), [
    '--seed',
    '1',
  ]);
  assert.throws(() => flagsString(['--cost', 'a b']), /cannot be passed through compose unquoted/);
});

test('interpolate follows compose: ${V:-d} on unset or empty, ${V-d} on unset only', () => {
  assert.equal(interpolate('${A:-x/y:1}', {}), 'x/y:1');
  assert.equal(interpolate('${A:-x}', { A: '' }), 'x');
  assert.equal(interpolate('${A-x}', { A: '' }), '');
  assert.equal(interpolate('${A-x}', {}), 'x');
  assert.equal(interpolate('${A:-x}', { A: 'mine' }), 'mine');
  assert.equal(interpolate('pre-${A}', { A: 'a' }), 'pre-a');
});

test('the compose file’s images: official ones by default, the env file’s when given', () => {
  const official = serviceImages({});
  assert.equal(official.toxiproxy, 'ghcr.io/shopify/toxiproxy:2.12.0');
  assert.equal(official['llm-stub'], official.api, 'the llm-stub runs the api image');
  for (const s of [
    'api',
    'redis',
    'postgres',
    'toxiproxy',
    'prometheus',
    'grafana',
    'grafana-image-renderer',
  ])
    assert.ok(official[s], `${s} has an image`);
  const env = parseEnvFile('# offline\nMETABENCH_REDIS_IMAGE=metabench-offline/redis:bookworm\n\nX="q"\n');
  assert.deepEqual(env, { METABENCH_REDIS_IMAGE: 'metabench-offline/redis:bookworm', X: 'q' });
  assert.equal(serviceImages(env).redis, 'metabench-offline/redis:bookworm');
});

test('compose arguments name the file and the project; a missing env file is a usage error', () => {
  assert.deepEqual(composeArgs({ project: 'p' }), ['-f', COMPOSE_FILE, '-p', 'p']);
  assert.throws(
    () => composeArgs({ project: 'p', envFile: '/nonexistent/offline.env' }),
    (e: unknown) => isBenchError(e) && e.code === 'E_USAGE' && /no such file/.test(e.message),
  );
});

test('a docker undo recipe calls the Engine API (POST /containers/{id}/unpause), and reads its answers', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const calls: string[] = [];
  const answers: Record<string, [number, string]> = {
    '/containers/c1/unpause': [204, ''],
    '/containers/c2/unpause': [409, '{"message":"Container c2 is not paused"}'],
    '/containers/c3/start': [304, ''],
    '/containers/c4/start': [404, '{"message":"No such container: c4"}'],
    '/containers/c5/start': [500, '{"message":"cannot start"}'],
  };
  // A stand-in engine on a unix socket; runUndo is synchronous, so it runs in a child while this loop serves.
  const srv = createServer((req, res) => {
    calls.push(`${req.method} ${req.url}`);
    const [status, body] = answers[req.url ?? ''] ?? [404, '{}'];
    res.writeHead(status, { 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => srv.listen(socketPath, () => r()));
  const { Worker } = await import('node:worker_threads');
  const undo = (container: string, action: 'unpause' | 'start'): Promise<string> =>
    new Promise((resolve, reject) => {
      const w = new Worker(
        `const { runUndo } = await import(${JSON.stringify(new URL('../../trigger/journal.js', import.meta.url).href)});
         const { registerRuntimes } = await import(${JSON.stringify(new URL('../../cli/runtimes.js', import.meta.url).href)});
         registerRuntimes();
         const { parentPort, workerData } = await import('node:worker_threads');
         try { parentPort.postMessage({ ok: runUndo(workerData) }); } catch (e) { parentPort.postMessage({ err: e.message }); }`,
        {
          eval: true,
          workerData: {
            kind: 'docker',
            action,
            container,
            engine: { socketPath },
            what: `undo ${container}`,
          },
        },
      );
      w.once('message', (m: { ok?: string; err?: string }) =>
        m.err ? reject(new Error(m.err)) : resolve(m.ok!),
      );
      w.once('error', reject);
    });
  try {
    assert.match(await undo('c1', 'unpause'), /undo c1: docker unpause \(HTTP 204\)/);
    assert.match(await undo('c2', 'unpause'), /already resumed \(Container c2 is not paused\)/);
    assert.match(await undo('c3', 'start'), /already running/);
    assert.match(await undo('c4', 'start'), /the container is gone/);
    await assert.rejects(undo('c5', 'start'), /HTTP 500 cannot start/);
    assert.deepEqual(calls.slice(0, 2), ['POST /containers/c1/unpause', 'POST /containers/c2/unpause']);
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
  // No engine at all: nothing left to undo, said rather than thrown.
  assert.match(
    runUndo({
      kind: 'docker',
      action: 'unpause',
      container: 'x',
      engine: { socketPath },
      what: 'resume api',
    }),
    /the Docker engine is gone/,
  );
});

test('the bridge gateway, when IPAM leaves it out, is the first host of the subnet', () => {
  assert.equal(firstHost('172.17.0.0/16'), '172.17.0.1');
  assert.equal(firstHost('10.1.2.128/25'), '10.1.2.129');
  assert.equal(firstHost('fd00::/64'), undefined);
});

test('projectContainers: a container removed between the list and its inspect (compose recreating it) is left out; another error still throws', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-engine-'));
  const socketPath = join(dir, 'docker.sock');
  const inspect = (id: string, service: string) => ({
    Id: id,
    Name: `/p_${service}_1`,
    Config: { Labels: { [SERVICE_LABEL]: service, [PROJECT_LABEL]: 'p' } },
    State: { Status: 'running', Pid: 42 },
    NetworkSettings: { Ports: {} },
    HostConfig: { PortBindings: {} },
  });
  let broken = false;
  // A stand-in engine: the list names three containers; "gone" was removed before its inspect.
  const srv = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://engine');
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname.endsWith('/containers/json'))
      return send(200, [{ Id: 'api-id' }, { Id: 'gone' }, { Id: 'redis-id' }]);
    if (url.pathname.endsWith('/containers/gone/json'))
      return broken
        ? send(500, { message: 'engine trouble' })
        : send(404, { message: 'No such container: gone' });
    const m = /\/containers\/(\w+)-id\/json$/.exec(url.pathname);
    if (m) return send(200, inspect(`${m[1]}-id`, m[1]!));
    send(404, { message: 'page not found' });
  });
  await new Promise<void>((r) => srv.listen(socketPath, () => r()));
  try {
    const docker = dockerClient({ socketPath });
    const found = await projectContainers(docker, 'p');
    assert.deepEqual(
      found.map((c) => [c.service, c.id]),
      [
        ['api', 'api-id'],
        ['redis', 'redis-id'],
      ],
    );
    broken = true;
    await assert.rejects(projectContainers(docker, 'p'), /engine trouble/);
  } finally {
    await new Promise<void>((r) => srv.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
});
