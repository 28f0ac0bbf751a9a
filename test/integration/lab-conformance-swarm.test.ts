import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { stackLeft } from '../../orchestrator/cli/labSwarm.js';
import { dockerClient, engineAddress } from '../../orchestrator/lab/engine/engine.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { OFFLINE_ENV_FILE, offlineImagesMissing } from '../helpers/offlineImages.js';
import { runCli, startCli, type CliResult } from '../helpers/cli.js';
import { Driver, labConformance } from '../helpers/labConformance.js';
import { readSecret, SECRETS } from '../../orchestrator/lab/swarm/credentials.js';
import { execPipe } from '../../orchestrator/lab/swarm/forward.js';
import { apiLinkConformance } from '../helpers/apiLinkConformance.js';
import { portTaken } from '../../orchestrator/lab/docker/ports.js';
import { apiService } from '../../orchestrator/lab/engine/replicas.js';
import { swarmState } from '../../orchestrator/lab/swarm/SwarmLab.js';
import { orphanContainers, taskEndpoints } from '../../orchestrator/lab/swarm/tasks.js';
import { createServer } from 'node:net';

// The Lab conformance suite on the swarm runtime, on a one-node swarm (initialised here when
// the engine is in none, and left at the end) and the images scripts/build-offline-images.sh
// built: skipped, saying why, where no engine answers, the images are not there or the engine
// is a swarm worker. Every behaviour of the suite applies, as on the docker runtime (the
// same Engine API calls on each task's container, the same recipes), but two by design: the
// stack outlives a run (down() leaves it up, teardownRecipe() is none) until `metabench lab
// down`, which the last test runs.

const STACK = 'metabench-conformance-swarm';
const ENV_FILE = OFFLINE_ENV_FILE;
const docker = dockerClient();

async function whyNot(): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message})`;
  }
  const missing = await offlineImagesMissing(docker, ENV_FILE);
  if (missing) return missing;
  const state = ((await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } })
    .Swarm;
  if (state?.LocalNodeState === 'active' && !state.ControlAvailable)
    return 'the engine is a swarm worker: a stack is deployed from a manager';
  if (state?.LocalNodeState !== 'active' && state?.LocalNodeState !== 'inactive')
    return `the engine's swarm is ${state?.LocalNodeState ?? 'unknown'}`;
  return undefined;
}

const skip = await whyNot();
let initialised = false;
if (skip) process.stderr.write(`lab-conformance-swarm: skipped: ${skip}\n`);
else {
  if (
    ((await docker.info()) as { Swarm?: { LocalNodeState?: string } }).Swarm?.LocalNodeState === 'inactive'
  ) {
    const init = spawnSync('docker', ['swarm', 'init', '--advertise-addr', '127.0.0.1'], {
      encoding: 'utf8',
    });
    assert.equal(init.status, 0, init.stderr);
    initialised = true;
  }
  // Swarm publishes on every interface: ports free there, so the stack never meets another lab.
  for (const s of ['REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS'])
    process.env[`METABENCH_${s}_PORT`] = String(await freePort('0.0.0.0'));
  // The api link's suite runs two replicas: api1 publishes METABENCH_API_PORT + 1.
  let api = await freePort('0.0.0.0');
  while (api >= 65535 || (await portTaken('0.0.0.0', api + 1))) api = await freePort('0.0.0.0');
  process.env.METABENCH_API_PORT = String(api);
}
after(async () => {
  if ((await stackLeft(docker, STACK).catch(() => [])).length > 0)
    spawnSync('docker', ['stack', 'rm', STACK], { stdio: 'ignore' });
  if (initialised) spawnSync('docker', ['swarm', 'leave', '--force'], { stdio: 'ignore' });
});

const outlives = 'the stack outlives a run until metabench lab down';
labConformance('swarm', {
  skip,
  docker: { project: STACK, envFile: ENV_FILE },
  caps: {
    processes:
      'socketPath' in engineAddress() ? true : 'the engine is not on this host, its pids mean nothing here',
    scrape: true,
    pauseUndo: true,
    startUndo: true,
    linkUndo: true,
    teardown: outlives,
    downStops: outlives,
  },
});

// The clients' link to the api: toxiproxy's task publishes a link per replica (host mode),
// each dialling the replica's container at its address on the stack's network (a container
// a trigger killed and started is no task of swarm's, and its DNS no longer names it).
apiLinkConformance(
  'swarm',
  {
    scrape: true,
    upstream: async (i) => {
      const { services, tasks, nodes } = await swarmState(docker, STACK);
      const ep = taskEndpoints(STACK, services, tasks, nodes).get(apiService(i));
      assert.ok(ep, `${apiService(i)} runs a task`);
      const c = await docker.getContainer(ep.container).inspect();
      return `${(c.NetworkSettings.Networks as Record<string, { IPAddress: string }>)[`${STACK}_default`]!.IPAddress}:8080`;
    },
    killedResetMs: 30_000,
  },
  { skip, docker: { project: STACK, envFile: ENV_FILE } },
);

/** The stack's containers swarm no longer runs a task for. */
async function orphans(stack: string): Promise<string[]> {
  const { tasks } = await swarmState(docker, stack);
  const containers = await docker.listContainers({
    all: true,
    filters: { label: [`com.docker.stack.namespace=${stack}`] },
  });
  return orphanContainers(tasks, containers).map((c) => c.Id);
}

test(
  'swarm: a container a trigger killed and started again (no task of swarm’s, holding its host port) is removed by the next lab up, whose api task then starts',
  { skip: skip ?? false },
  async () => {
    const left = await orphans(STACK);
    assert.ok(left.length > 0, 'the api link suite killed api[0] and started it through the engine');
    const up = await runCli(['lab', 'up', '--runtime', 'swarm', '--project', STACK, '--env-file', ENV_FILE]);
    assert.equal(up.code, 0, up.stderr);
    assert.deepEqual(await orphans(STACK), []);
    const all = (await docker.listContainers({ all: true })).map((c) => c.Id);
    for (const id of left) assert.ok(!all.includes(id), `container ${id.slice(0, 12)} removed`);
    assert.match(up.stdout, /^api\s+running\s+healthy/m);
  },
);

test(
  'swarm: lab up with the api port taken fails at once, before deploying, naming the port, the node and the error',
  { skip: skip ?? false },
  async () => {
    const stack = 'metabench-swarm-clash';
    const port = await freePort('0.0.0.0');
    const holder = createServer();
    await new Promise<void>((r) => holder.listen(port, '0.0.0.0', r));
    try {
      // Far under the 300 s wait for tasks: a run that waited for the failed task would be killed, not exit.
      const up = await runCliWithin(
        60_000,
        ['lab', 'up', '--runtime', 'swarm', '--project', stack, '--env-file', ENV_FILE],
        { ...(await ownPorts()), METABENCH_API_PORT: String(port) },
      );
      assert.equal(up.signal, null, 'lab up exited by itself');
      assert.equal(up.code, 4, up.stderr);
      assert.match(
        up.stderr,
        new RegExp(`api publishes port ${port} on node \\S+, where it is taken \\(EADDRINUSE`),
      );
      assert.match(up.stderr, /METABENCH_API_PORT/);
      assert.deepEqual(await stackLeft(docker, stack), [], 'nothing deployed');
    } finally {
      holder.close();
    }
  },
);

test(
  'swarm: lab up fails at the first failed task, naming service, node and the engine’s error, not after its 300 s wait',
  { skip: skip ?? false },
  async () => {
    const stack = 'metabench-swarm-failing';
    try {
      // The api exits at its start (an option it does not know): its task fails, and swarm never retries it.
      const up = await runCliWithin(
        150_000,
        ['lab', 'up', '--runtime', 'swarm', '--project', stack, '--env-file', ENV_FILE],
        { ...(await ownPorts()), METABENCH_API_FLAGS: '--no-such-flag' },
      );
      assert.equal(up.signal, null, 'lab up exited by itself');
      assert.equal(up.code, 4, up.stderr);
      assert.match(up.stderr, /api's task \S+ failed on node \S+: task: non-zero exit \(2\)/);
    } finally {
      await runCli(['lab', 'down', '--runtime', 'swarm', '--project', stack, '--env-file', ENV_FILE]);
    }
    assert.deepEqual(await stackLeft(docker, stack), []);
  },
);

/** Free ports for every service a second stack publishes: it must not meet the suite's stack. */
async function ownPorts(): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const s of ['REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS', 'API'])
    env[`METABENCH_${s}_PORT`] = String(await freePort('0.0.0.0'));
  return env;
}

/** `metabench ARGS`, killed (SIGTERM) if it has not exited within `ms`. */
async function runCliWithin(ms: number, args: string[], env: Record<string, string>): Promise<CliResult> {
  const run = startCli(args, env);
  const timer = setTimeout(() => run.child.kill('SIGTERM'), ms);
  try {
    return await run.done;
  } finally {
    clearTimeout(timer);
  }
}

/** Redis's answer to AUTH and PING through the fault proxy's link `redis`, from the control service (as the api reaches it). */
async function pingThroughLink(): Promise<string> {
  const { services, tasks, nodes } = await swarmState(docker, STACK);
  const control = taskEndpoints(STACK, services, tasks, nodes).get('control');
  assert.ok(control, 'the control service runs');
  const password = await readSecret(docker, control.container, SECRETS.redis);
  const pipe = await execPipe(docker, control.container, 'toxiproxy', 26379)();
  let got = '';
  pipe.output.on('data', (d: Buffer) => (got += d.toString()));
  pipe.input.write(`AUTH ${password}\r\nPING\r\n`);
  const until = Date.now() + 10_000;
  while (!got.includes('PONG') && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  pipe.stop();
  return got;
}

test(
  'swarm: kill(redis) then start(redis): the api’s link to Redis reaches the restarted container (swarm’s DNS no longer names it), refusing while it is down',
  { skip: skip ?? false },
  async () => {
    const d = new Driver('swarm', { project: STACK, envFile: ENV_FILE });
    try {
      await d.up();
      assert.match(await pingThroughLink(), /\+OK\r\n\+PONG/);
      await d.lab.kill('redis');
      assert.doesNotMatch(await pingThroughLink(), /PONG/, 'no Redis behind the link while it is down');
      await d.lab.start('redis');
      const { services, tasks, nodes } = await swarmState(docker, STACK);
      // The task is failed for swarm (restart policy none): the container runs outside its knowledge.
      assert.equal(taskEndpoints(STACK, services, tasks, nodes).get('redis'), undefined);
      assert.match(await pingThroughLink(), /\+OK\r\n\+PONG/, 'the restarted Redis behind the link');
    } finally {
      await d.close();
    }
  },
);

test(
  'swarm: lab down leaves no service, container, network, config or volume of the stack',
  { skip: skip ?? false },
  async () => {
    assert.ok((await stackLeft(docker, STACK)).length > 0, 'the stack has something to remove');
    const down = await runCli([
      'lab',
      'down',
      '--runtime',
      'swarm',
      '--project',
      STACK,
      '--env-file',
      ENV_FILE,
    ]);
    assert.equal(down.code, 0, down.stderr);
    assert.deepEqual(await stackLeft(docker, STACK), []);
  },
);
