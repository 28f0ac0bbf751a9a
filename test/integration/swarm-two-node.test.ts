import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { stackLeft } from '../../orchestrator/cli/labSwarm.js';
import { dockerClient, inspectContainer } from '../../orchestrator/lab/engine/engine.js';
import { parseEnvFile } from '../../orchestrator/lab/engine/images.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { swarmState } from '../../orchestrator/lab/swarm/SwarmLab.js';
import { taskEndpoints } from '../../orchestrator/lab/swarm/tasks.js';
import { engineOrImagesMissing, OFFLINE_ENV_FILE } from '../helpers/offlineImages.js';
import { runCli, startCli, tempDir } from '../helpers/cli.js';
import {
  HOST_ADDR,
  joinAsWorker,
  leftOnWorker,
  loadImages,
  NODE_ADDR,
  NODE_NAME,
  NODE_PATHS,
  reclaim,
  secondEngineUnavailable,
  startSecondEngine,
  type SecondEngine,
  VETH_HOST,
} from '../helpers/secondEngine.js';

// The swarm runtime on two nodes (issue 36): a second Docker engine in a network namespace of
// its own (test/helpers/secondEngine.ts) joins, as a worker, the swarm this test initialises on
// the first engine, advertised at the veth address the second reaches it on. The retry storm
// runs with the api placed on the worker (lab.placement, by a node label) and Redis, Postgres
// and the fault proxy on the manager: the api reaches them over the stack's overlay network
// (VXLAN between the two namespaces), the generator reaches the api at the worker's address,
// and the pause reaches the api's container through the worker's engine (its metabench.engine
// label), where this test sees it paused. The verdict is given; `lab down` leaves nothing of
// the stack on either engine, and the second engine is gone at the end, whatever happened.
// Skipped, saying why, where no engine answers, the images are not there, the engine is
// already in a swarm (the test needs a manager advertised at the veth address) or a second
// engine cannot start here (not root, a tool missing).

const STACK = 'metabench-swarm-2node';
const ENV_FILE = OFFLINE_ENV_FILE;
const docker = dockerClient();

async function whyNot(): Promise<string | undefined> {
  const missing = await engineOrImagesMissing(docker, ENV_FILE);
  if (missing) return missing;
  const state = ((await docker.info()) as { Swarm?: { LocalNodeState?: string } }).Swarm?.LocalNodeState;
  if (state !== 'inactive')
    return `the engine's swarm is ${state ?? 'unknown'}: this test initialises its own, advertised at ${HOST_ADDR} where the second engine reaches it`;
  return secondEngineUnavailable();
}

const skip = await whyNot();

test(
  'swarm on two nodes: the api on a worker in its own network namespace, the data services on the manager, the pause on the worker, the verdict, lab down leaving nothing on either',
  { skip: skip ?? false },
  async (t) => {
    const t0 = Date.now();
    const since = (): string => `${((Date.now() - t0) / 1000).toFixed(0)} s`;
    let node: SecondEngine | undefined;
    let initialised = false;
    // A test process that dies without its finally (an uncaught error) still undoes it all.
    const undo = (): void => {
      if (initialised) spawnSync('docker', ['swarm', 'leave', '--force'], { stdio: 'ignore' });
      initialised = false;
      reclaim((step, ms) => process.stderr.write(`reclaim: ${step} ${ms} ms\n`));
    };
    process.once('exit', undo);
    const common = ['--runtime', 'swarm', '--project', STACK, '--env-file', ENV_FILE];
    const env: Record<string, string> = { METABENCH_STATE_DIR: tempDir('swarm-2node-state') };
    try {
      node = await startSecondEngine(docker);
      const init = spawnSync('docker', ['swarm', 'init', '--advertise-addr', HOST_ADDR], {
        encoding: 'utf8',
      });
      assert.equal(init.status, 0, init.stderr);
      initialised = true;
      const worker = await joinAsWorker(docker, node, { role: 'api' });
      // Swarm ships no image between nodes: the api's goes to the worker as a user would send it.
      const apiImage = parseEnvFile(readFileSync(ENV_FILE, 'utf8')).METABENCH_API_IMAGE!;
      loadImages([apiImage]);
      t.diagnostic(`second engine up, joined as a worker, api image loaded after ${since()}`);

      // Swarm publishes on every interface of the node that runs the task: ports free here.
      for (const s of ['REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS', 'API'])
        env[`METABENCH_${s}_PORT`] = String(await freePort('0.0.0.0'));
      const out = join(tempDir('swarm-2node'), 'out');
      const run = startCli(
        [
          'run',
          'experiments/retry-storm.yaml',
          '--any-scale',
          '--scale',
          '0.2',
          ...Object.entries({
            // As swarm-lab.test.ts runs the storm: two workers, the pause through dockerd, the
            // generator sharing this 2-core machine with both engines.
            'lab.api.workers': '2',
            'validity.triggerOnTime': '1s',
            'validity.lagP99': '100ms',
            // The api on the node labelled role=api (the worker), the data services on the manager.
            'lab.placement.api': '["node.labels.role == api"]',
            'lab.placement.redis': '["node.role == manager"]',
            'lab.placement.postgres': '["node.role == manager"]',
            'lab.placement.proxy': '["node.role == manager"]',
          }).flatMap(([k, v]) => ['--set', `${k}=${v}`]),
          '--out',
          out,
          '--quiet',
          ...common,
        ],
        env,
      );
      // While it runs: where each task is, and the api container's state as the worker's engine says.
      const states = new Set<string>();
      let placed: { api?: string; data: Record<string, string>; apiContainer?: string } = { data: {} };
      let running = true;
      void run.done.then(() => (running = false));
      while (running) {
        const { services, tasks, nodes } = await swarmState(docker, STACK).catch(() => ({
          services: [],
          tasks: [],
          nodes: [],
        }));
        const eps = taskEndpoints(STACK, services, tasks, nodes);
        const api = eps.get('api');
        if (api) {
          placed = { ...placed, api: api.node, apiContainer: api.container };
          const c = await inspectContainer(node.docker, api.container).catch(() => undefined);
          if (c) states.add(c.state);
        }
        for (const s of ['redis', 'postgres', 'toxiproxy']) if (eps.get(s)) placed.data[s] = eps.get(s)!.node;
        await new Promise((r) => setTimeout(r, 250));
      }
      const done = await run.done;
      t.diagnostic(
        `storm done after ${since()}; api container states seen on the worker: ${[...states].join(', ')}`,
      );
      assert.equal(done.code, 0, done.stderr);
      const self = ((await docker.info()) as { Swarm?: { NodeID?: string } }).Swarm!.NodeID!;
      assert.equal(placed.api, worker, 'the api task ran on the worker');
      assert.deepEqual(
        placed.data,
        { redis: self, postgres: self, toxiproxy: self },
        'the data services on the manager',
      );
      // Its container is the worker engine's, not the first engine's.
      await assert.rejects(docker.getContainer(placed.apiContainer!).inspect(), /no such container/i);
      assert.ok(
        states.has('paused'),
        `the pause reached the api on the worker: states ${[...states].join(', ')}`,
      );
      assert.ok(states.has('running'));

      const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
      assert.equal(s.usable, true, JSON.stringify(s));
      assert.equal(s.metastable, true, `verdict: ${s.recoveryReason}`);
      const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
        topology: {
          components: { name: string; config: { tasks?: { node?: string; address?: string }[] } }[];
        };
      };
      const api = manifest.topology.components.find((c) => c.name === 'api')!;
      assert.deepEqual(
        api.config.tasks?.map((x) => [x.node, x.address]),
        [[NODE_NAME, NODE_ADDR]],
      );

      // lab down: nothing of the stack on the manager, nor on the worker.
      const down = await runCli(['lab', 'down', ...common], env);
      assert.equal(down.code, 0, down.stderr);
      assert.deepEqual(await stackLeft(docker, STACK), []);
      assert.deepEqual(await leftOnWorker(node.docker, STACK), []);
      t.diagnostic(`lab down done after ${since()}`);
    } finally {
      if (initialised && (await stackLeft(docker, STACK).catch(() => [])).length > 0)
        spawnSync('docker', ['stack', 'rm', STACK], { stdio: 'ignore' });
      const leaving = Date.now();
      undo();
      process.removeListener('exit', undo);
      t.diagnostic(
        `second engine removed in ${Date.now() - leaving} ms; two-node test done after ${since()}`,
      );
    }
    // The second engine left nothing: no folder, namespace or interface; the first engine is in no swarm.
    for (const p of NODE_PATHS) assert.equal(existsSync(p), false, `${p} is left`);
    assert.notEqual(spawnSync('ip', ['link', 'show', VETH_HOST]).status, 0, 'the veth pair is left');
    assert.equal(
      ((await docker.info()) as { Swarm?: { LocalNodeState?: string } }).Swarm?.LocalNodeState,
      'inactive',
    );
  },
);
