import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { BenchError } from '../../../foundation/errors.js';
import { freePort } from '../local/dataServices.js';
import { COMPOSE_FILE } from '../engine/compose.js';
import { checkStackPorts, meetsConstraint, nodesFor, stackPorts } from './portCheck.js';
import { readCompose, stackFile } from './stack.js';
import type { SwarmNode, SwarmTask } from './tasks.js';

// The swarm lab's port check before a deploy: which ports, on which nodes (placement), and a
// real bind on this machine for the node the orchestrator runs on.

const nodes: SwarmNode[] = [
  { ID: 'm', Description: { Hostname: 'manager' }, Status: { Addr: '127.0.0.1' }, Spec: { Role: 'manager' } },
  {
    ID: 'w',
    Description: { Hostname: 'apis' },
    Status: { Addr: '127.0.0.1' },
    Spec: { Role: 'worker', Labels: { tier: 'api' } },
  },
  {
    ID: 'd',
    Description: { Hostname: 'gone' },
    Status: { Addr: '10.0.0.9', State: 'down' },
    Spec: { Role: 'worker' },
  },
];

test('placement: role, hostname, id and labels are read, == and !=; an attribute it cannot read keeps the node; a down node is none', () => {
  const [m, w] = nodes as [SwarmNode, SwarmNode];
  assert.equal(meetsConstraint('node.role == manager', m), true);
  assert.equal(meetsConstraint('node.role==manager', w), false);
  assert.equal(meetsConstraint('node.hostname != apis', w), false);
  assert.equal(meetsConstraint('node.id == w', w), true);
  assert.equal(meetsConstraint('node.labels.tier == api', w), true);
  assert.equal(meetsConstraint('node.labels.tier == api', m), false);
  assert.equal(meetsConstraint('node.platform.os == linux', m), undefined);
  assert.deepEqual(
    nodesFor(['node.role == worker'], nodes).map((n) => n.ID),
    ['w'],
  );
  assert.deepEqual(
    nodesFor(['node.platform.os == linux'], nodes).map((n) => n.ID),
    ['m', 'w'],
  );
});

test('stackPorts: every published port of the generated stack with its service’s constraints; the ports the engine picks are not among them', () => {
  const doc = stackFile(readCompose(COMPOSE_FILE), {
    stack: 'lab',
    replicas: 2,
    env: { METABENCH_API_PORT: '9100' },
    observers: false,
    apiLink: true,
    placement: { api: ['node.labels.tier == api'] },
  });
  const ports = stackPorts(doc);
  assert.deepEqual(
    ports.filter((p) => p.service.startsWith('api')),
    [
      { service: 'api', port: 9100, constraints: ['node.labels.tier == api'] },
      { service: 'api1', port: 9101, constraints: ['node.labels.tier == api'] },
    ],
  );
  // The fault proxy's API is not published on swarm (the control service forwards to it).
  assert.deepEqual(
    ports.filter((p) => !p.service.startsWith('api')),
    [],
  );
  assert.ok(
    !ports.some((p) => p.port >= 28080 && p.port < 28090),
    'the api links’ ports are the engine’s pick',
  );
});

test('checkStackPorts: a port taken on this machine’s node is a clash naming service, port, node, the error, how it was checked and the variable; one the stack’s own task holds is not', async () => {
  const taken = await freePort('0.0.0.0');
  const holder = createServer();
  await new Promise<void>((r) => holder.listen(taken, '0.0.0.0', r));
  try {
    const free = await freePort('0.0.0.0');
    const doc = {
      services: {
        api: {
          ports: [{ target: 8080, published: taken, mode: 'host' }],
          deploy: { placement: { constraints: ['node.role == manager'] } },
        },
        redis: { ports: [{ target: 6379, published: free, mode: 'host' }] },
      },
    };
    const state = {
      services: [{ ID: 's-api', Spec: { Name: 'lab_api' } }],
      tasks: [] as SwarmTask[],
      nodes: nodes.slice(0, 1),
    };
    await assert.rejects(checkStackPorts('lab', doc, state, 'm'), (err: unknown) => {
      assert.ok(err instanceof BenchError);
      assert.equal(err.code, 'E_LAB_PREFLIGHT');
      assert.match(
        err.message,
        new RegExp(
          `api publishes port ${taken} on node manager, where it is taken \\(EADDRINUSE; checked by binding 0\\.0\\.0\\.0:${taken} on this machine, node manager\\): set METABENCH_API_PORT to a free port`,
        ),
      );
      assert.doesNotMatch(err.message, /redis/);
      return true;
    });
    // The stack's own running api task holds the port there: a redeploy replaces it.
    const own: SwarmTask = {
      ID: 't',
      ServiceID: 's-api',
      NodeID: 'm',
      DesiredState: 'running',
      Status: {
        State: 'running',
        ContainerStatus: { ContainerID: 'c' },
        PortStatus: {
          Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: taken, PublishMode: 'host' }],
        },
      },
    };
    const lines = await checkStackPorts('lab', doc, { ...state, tasks: [own] }, 'm');
    assert.ok(
      lines.some((l) => l.includes(`port ${taken} on manager: held by the stack's own task`)),
      lines.join('\n'),
    );
    // Another node is reached at its address: something answering there is a clash, said so.
    await assert.rejects(
      checkStackPorts(
        'lab',
        doc,
        {
          ...state,
          nodes: [
            {
              ID: 'o',
              Description: { Hostname: 'other' },
              Status: { Addr: '127.0.0.1' },
              Spec: { Role: 'manager' },
            },
          ],
        },
        'm',
      ),
      new RegExp(
        `api publishes port ${taken} on node other, where it is taken \\(something accepts connections there; checked by connecting from this machine to 127\\.0\\.0\\.1:${taken}`,
      ),
    );
  } finally {
    holder.close();
  }
});
