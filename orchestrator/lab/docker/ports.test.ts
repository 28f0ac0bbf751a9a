import assert from 'node:assert/strict';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { test } from 'node:test';
import { isBenchError } from '../../../foundation/errors.js';
import { checkPorts, ownPorts, publishedPorts } from './ports.js';
import type { ServiceContainer } from '../engine/engine.js';

// The port preflight of `lab up --runtime docker`: the host ports of docker-compose.yml, as
// compose resolves them, checked against real listening sockets.

async function listen(): Promise<{ srv: Server; port: number }> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  return { srv, port: (srv.address() as AddressInfo).port };
}

test('published ports: the compose defaults, each with the variable that moves it', () => {
  assert.deepEqual(
    publishedPorts(['api', 'redis', 'postgres', 'toxiproxy', 'prometheus', 'grafana', 'llm-stub'], {}),
    [
      { service: 'api', hostIp: '127.0.0.1', port: 8080, variable: 'METABENCH_API_PORT' },
      { service: 'redis', hostIp: '127.0.0.1', port: 6379, variable: 'METABENCH_REDIS_PORT' },
      { service: 'postgres', hostIp: '127.0.0.1', port: 5432, variable: 'METABENCH_POSTGRES_PORT' },
      { service: 'toxiproxy', hostIp: '127.0.0.1', port: 8474, variable: 'METABENCH_TOXIPROXY_PORT' },
      { service: 'prometheus', hostIp: '127.0.0.1', port: 9090, variable: 'METABENCH_PROMETHEUS_PORT' },
      { service: 'grafana', hostIp: '127.0.0.1', port: 3000, variable: 'METABENCH_GRAFANA_PORT' },
      { service: 'llm-stub', hostIp: '127.0.0.1', port: 8000, variable: 'METABENCH_LLM_PORT' },
    ],
  );
  assert.equal(publishedPorts(['api'], { METABENCH_API_PORT: '18080' })[0]!.port, 18080);
  assert.deepEqual(publishedPorts(['grafana-image-renderer'], {}), [], 'it publishes none');
});

test('a taken port: lab up stops before compose, naming the service, the port and the variable', async () => {
  const { srv, port } = await listen();
  try {
    const ports = publishedPorts(['api', 'postgres'], {
      METABENCH_POSTGRES_PORT: String(port),
      METABENCH_API_PORT: '0',
    });
    await assert.rejects(
      checkPorts(
        ports.filter((p) => p.port !== 0),
        new Set(),
      ),
      (e: unknown) =>
        isBenchError(e) &&
        e.code === 'E_LAB_PREFLIGHT' &&
        e.message ===
          `port clash: postgres publishes 127.0.0.1:${port}, which is taken (EADDRINUSE): set METABENCH_POSTGRES_PORT to a free port`,
    );
    // Held by the project's own container (a second `lab up`): not a clash.
    await checkPorts(
      ports.filter((p) => p.port !== 0),
      new Set([`127.0.0.1:${port}`]),
    );
  } finally {
    srv.close();
  }
});

test('several clashes are reported at once; free ports pass', async () => {
  const a = await listen();
  const b = await listen();
  const free = await listen();
  free.srv.close();
  try {
    const env = {
      METABENCH_REDIS_PORT: String(a.port),
      METABENCH_PROMETHEUS_PORT: String(b.port),
      METABENCH_API_PORT: String(free.port),
    };
    await assert.rejects(
      checkPorts(publishedPorts(['api', 'redis', 'prometheus'], env), new Set()),
      (e: unknown) =>
        isBenchError(e) &&
        /redis publishes 127\.0\.0\.1:\d+, which is taken \(EADDRINUSE\): set METABENCH_REDIS_PORT/.test(
          e.message,
        ) &&
        /; prometheus publishes .*METABENCH_PROMETHEUS_PORT/.test(e.message) &&
        !/api/.test(e.message),
    );
    await checkPorts(publishedPorts(['api'], env), new Set());
  } finally {
    a.srv.close();
    b.srv.close();
  }
});

test("the project's own ports: a running container's, and a restarting or paused one's bindings; a stopped one holds none", () => {
  const container = (state: string, ports: Record<string, string>, bindings: string[]): ServiceContainer => ({
    id: state,
    name: `p_${state}`,
    service: state,
    state,
    health: undefined,
    pid: 0,
    ports,
    listening: Object.values(ports),
    bindings,
    image: 'x',
    restartCount: 0,
    exitCode: 0,
  });
  const own = ownPorts([
    container('running', { '8080/tcp': '127.0.0.1:18080' }, ['127.0.0.1:18080']),
    // Restart-looping after a failed lab up: no published ports while down, yet bound.
    container('restarting', {}, ['127.0.0.1:18081']),
    container('paused', { '6379/tcp': '127.0.0.1:18082' }, ['127.0.0.1:18082']),
    container('exited', {}, ['127.0.0.1:18083']),
  ]);
  assert.deepEqual([...own].sort(), ['127.0.0.1:18080', '127.0.0.1:18081', '127.0.0.1:18082']);
});
