import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { dockerClient, inspectContainer } from './engine.js';

// What `lab status` prints as a container's addresses: every binding the engine reports, as it
// bound it (a swarm host-mode port on 0.0.0.0 and [::]; compose's 127.0.0.1), never assumed.
// The engine is a stand-in answering GET /containers/ID/json on a unix socket, as dockerd does.

function inspectJson(ports: Record<string, { HostIp: string; HostPort: string }[] | null>): object {
  return {
    Id: 'c1',
    Name: '/lab_api.1.x',
    Config: { Labels: {}, Image: 'metabench/api:dev' },
    State: { Status: 'running', Pid: 0, ExitCode: 0 },
    RestartCount: 0,
    HostConfig: { PortBindings: {} },
    NetworkSettings: { Ports: ports },
  };
}

test('inspectContainer: every address the engine bound, IPv6 in brackets; the first one as the service’s address', async () => {
  let answer: object = {};
  const server = createServer((req, res) => {
    assert.match(req.url ?? '', /\/containers\/c1\/json$/);
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify(answer));
  });
  const socketPath = join(mkdtempSync(join(tmpdir(), 'metabench-engine-')), 'docker.sock');
  server.listen(socketPath);
  await once(server, 'listening');
  try {
    const docker = dockerClient({ socketPath });
    answer = inspectJson({
      '8080/tcp': [
        { HostIp: '0.0.0.0', HostPort: '9100' },
        { HostIp: '::', HostPort: '9100' },
      ],
      '9000/tcp': null,
    });
    const swarm = await inspectContainer(docker, 'c1');
    assert.deepEqual(swarm.listening, ['0.0.0.0:9100', '[::]:9100']);
    assert.deepEqual(swarm.ports, { '8080/tcp': '0.0.0.0:9100' });
    answer = inspectJson({ '6379/tcp': [{ HostIp: '127.0.0.1', HostPort: '6379' }] });
    assert.deepEqual((await inspectContainer(docker, 'c1')).listening, ['127.0.0.1:6379']);
    answer = inspectJson({});
    assert.deepEqual((await inspectContainer(docker, 'c1')).listening, []);
  } finally {
    server.close();
  }
});
