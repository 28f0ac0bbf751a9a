import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  describeFailure,
  deployFailures,
  ENGINE_LABEL,
  missingImages,
  nodeAddress,
  nodeEngine,
  orphanContainers,
  TASK_ID_LABEL,
  taskEndpoints,
  type SwarmNode,
  type SwarmTask,
} from './tasks.js';

// Task discovery on the Engine API's objects as a three-node swarm reports them (the fields
// the engine sends, trimmed to those read).

const nodes: SwarmNode[] = [
  {
    ID: 'm',
    Description: { Hostname: 'manager' },
    Status: { Addr: '0.0.0.0' },
    ManagerStatus: { Addr: '10.0.0.1:2377' },
  },
  {
    ID: 'w1',
    Description: { Hostname: 'apis' },
    Status: { Addr: '10.0.0.2' },
    Spec: { Labels: { [ENGINE_LABEL]: 'ssh://lab@10.0.0.2' } },
  },
  { ID: 'w2', Description: { Hostname: 'data' }, Status: { Addr: '10.0.0.3' } },
];
const services = [
  { ID: 's-api', Spec: { Name: 'lab_api' } },
  { ID: 's-api1', Spec: { Name: 'lab_api1' } },
  { ID: 's-redis', Spec: { Name: 'lab_redis' } },
  { ID: 's-other', Spec: { Name: 'other_api' } },
];
const task = (
  id: string,
  service: string,
  node: string,
  state: string,
  desired: string,
  port?: number,
): SwarmTask => ({
  ID: id,
  ServiceID: service,
  NodeID: node,
  DesiredState: desired,
  Status: {
    State: state,
    ContainerStatus: { ContainerID: `c-${id}` },
    ...(port
      ? {
          PortStatus: {
            Ports: [{ Protocol: 'tcp', TargetPort: 8080, PublishedPort: port, PublishMode: 'host' }],
          },
        }
      : {}),
  },
});

test('task discovery: each service’s running task, at its node’s address and published port', () => {
  const found = taskEndpoints(
    'lab',
    services,
    [
      // A rolling update's old task (desired shutdown) and a failed one are not the service's.
      task('old', 's-api', 'm', 'running', 'shutdown', 9000),
      task('t0', 's-api', 'w1', 'running', 'running', 8080),
      task('dead', 's-api1', 'w1', 'failed', 'shutdown', 8081),
      task('t1', 's-api1', 'w1', 'running', 'running', 8081),
      task('r', 's-redis', 'w2', 'running', 'running'),
      // Another stack's service of the same short name.
      task('x', 's-other', 'm', 'running', 'running', 7000),
      // Still starting: not yet an endpoint.
      task('new', 's-redis', 'm', 'starting', 'running'),
    ],
    nodes,
  );
  assert.deepEqual([...found.keys()], ['api', 'api1', 'redis']);
  assert.deepEqual(found.get('api'), {
    service: 'api',
    task: 't0',
    container: 'c-t0',
    node: 'w1',
    hostname: 'apis',
    address: '10.0.0.2',
    ports: { '8080/tcp': '10.0.0.2:8080' },
  });
  assert.deepEqual(found.get('api1')?.ports, { '8080/tcp': '10.0.0.2:8081' });
  assert.equal(found.get('redis')?.address, '10.0.0.3');
  assert.deepEqual(found.get('redis')?.ports, {});
});

test('task discovery: a manager reporting 0.0.0.0 is reached at its manager address; two running tasks of one service are refused', () => {
  assert.equal(nodeAddress(nodes[0]!), '10.0.0.1');
  assert.equal(
    nodeAddress({ ID: 'v6', Status: { Addr: '0.0.0.0' }, ManagerStatus: { Addr: '[fd00::1]:2377' } }),
    'fd00::1',
  );
  assert.throws(() => nodeAddress({ ID: 'x', Status: { Addr: '0.0.0.0' } }), /reports no address/);
  assert.throws(
    () =>
      taskEndpoints(
        'lab',
        services,
        [
          task('a', 's-api', 'm', 'running', 'running', 8080),
          task('b', 's-api', 'w1', 'running', 'running', 8080),
        ],
        nodes,
      ),
    /lab_api runs two tasks \(a, b\)/,
  );
});

test('task discovery: a task’s container is acted on through its node’s engine', () => {
  const own = { socketPath: '/var/run/docker.sock' };
  assert.equal(nodeEngine(nodes[0]!, 'm', own), own);
  assert.deepEqual(nodeEngine(nodes[1]!, 'm', own), {
    ssh: 'ssh://lab@10.0.0.2',
    from: 'DOCKER_HOST=ssh://lab@10.0.0.2',
  });
  assert.throws(() => nodeEngine(nodes[2]!, 'm', own), /swarm node data .* no metabench\.engine label/);
});

test('missingImages: a wanted service whose task the engine rejected for want of its image, with the image', () => {
  const rejected = (id: string, service: string, err: string): SwarmTask => ({
    ID: id,
    ServiceID: service,
    DesiredState: 'running',
    Status: { State: 'rejected', Err: err },
  });
  const tasks: SwarmTask[] = [
    rejected('t1', 's-redis', 'No such image: redis:7.2.5'),
    rejected('t2', 's-redis', 'No such image: redis:7.2.5'),
    rejected('t3', 's-api', 'No such image: metabench/api:dev'),
    // another reason, another stack, a service not waited for: none is a missing image here
    rejected('t4', 's-api1', 'port 8080 is already in use'),
    rejected('t5', 's-other', 'No such image: elsewhere:1'),
    { ID: 't6', ServiceID: 's-api1', DesiredState: 'running', Status: { State: 'running' } },
  ];
  assert.deepEqual(missingImages('lab', services, tasks, new Set(['redis', 'api1'])), ['redis: redis:7.2.5']);
  assert.deepEqual(missingImages('lab', services, tasks, new Set(['redis', 'api', 'api1'])), [
    'api: metabench/api:dev',
    'redis: redis:7.2.5',
  ]);
  assert.deepEqual(missingImages('lab', services, tasks, new Set(['api1'])), []);
});

test('deployFailures: the failed and rejected tasks a deploy started, of the services waited for, with node and the engine’s words; tasks from before the deploy are not its doing', () => {
  const failed = (id: string, service: string, state: string, err: string): SwarmTask => ({
    ...task(id, service, 'm', state, 'shutdown'),
    Status: { State: state, Err: err },
  });
  const list = {
    services,
    nodes,
    tasks: [
      failed('old', 's-api', 'failed', 'task: non-zero exit (137)'), // an earlier run's kill
      task('t1', 's-api1', 'm', 'running', 'running'),
      failed('t2', 's-api', 'failed', 'Bind for 0.0.0.0:8080 failed: port is already allocated'),
      failed('t3', 's-redis', 'rejected', 'no suitable node'),
      task('t4', 's-redis', 'm', 'pending', 'running'),
      failed('t5', 's-other', 'failed', 'another stack'),
    ],
  };
  const got = deployFailures('lab', list, new Set(['old']), new Set(['api', 'api1', 'redis']));
  assert.deepEqual(got, [
    {
      service: 'api',
      task: 't2',
      state: 'failed',
      node: 'manager',
      error: 'Bind for 0.0.0.0:8080 failed: port is already allocated',
    },
    { service: 'redis', task: 't3', state: 'rejected', node: 'manager', error: 'no suitable node' },
  ]);
  assert.equal(
    describeFailure(got[0]!),
    "api's task t2 failed on node manager: Bind for 0.0.0.0:8080 failed: port is already allocated",
  );
  assert.deepEqual(deployFailures('lab', list, new Set(['old']), new Set(['api1'])), []);
  assert.deepEqual(deployFailures('lab', list, new Set(['old', 't2', 't3']), new Set(['api', 'redis'])), []);
});

test('orphanContainers: a running container whose task swarm has done with (failed, complete) or forgotten; not a stopped one, not a running task’s, not a non-task container', () => {
  const tasks = [
    task('run', 's-api', 'm', 'running', 'running'),
    task('starting', 's-api1', 'm', 'starting', 'running'),
    task('killed', 's-api', 'm', 'failed', 'shutdown'),
    task('done', 's-redis', 'm', 'complete', 'shutdown'),
  ];
  const c = (Id: string, State: string, taskId?: string) => ({
    Id,
    State,
    Labels: taskId ? { [TASK_ID_LABEL]: taskId } : {},
  });
  const containers = [
    c('c-run', 'running', 'run'),
    c('c-starting', 'running', 'starting'),
    c('c-killed', 'running', 'killed'), // killed by a trigger, started by the engine
    c('c-done-paused', 'paused', 'done'),
    c('c-killed-exited', 'exited', 'killed'), // holds no port: swarm's history
    c('c-gone', 'running', 'forgotten'),
    c('c-plain', 'running'),
  ];
  assert.deepEqual(
    orphanContainers(tasks, containers).map((x) => x.Id),
    ['c-killed', 'c-done-paused', 'c-gone'],
  );
});
