import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, test } from 'node:test';
import { stackLeft } from '../../orchestrator/cli/labSwarm.js';
import { dockerClient, engineAddress } from '../../orchestrator/lab/engine/engine.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { OFFLINE_ENV_FILE, offlineImagesMissing } from '../helpers/offlineImages.js';
import { runCli } from '../helpers/cli.js';
import { labConformance } from '../helpers/labConformance.js';

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
  for (const s of ['REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS', 'API'])
    process.env[`METABENCH_${s}_PORT`] = String(await freePort('0.0.0.0'));
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
