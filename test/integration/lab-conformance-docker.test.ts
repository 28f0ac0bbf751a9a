import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { runCompose } from '../../orchestrator/lab/docker/compose.js';
import { dockerClient, engineAddress, projectContainers } from '../../orchestrator/lab/docker/engine.js';
import { parseEnvFile } from '../../orchestrator/lab/docker/images.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { REPO } from '../helpers/cli.js';
import { labConformance } from '../helpers/labConformance.js';

// The Lab conformance suite on the docker runtime, on the images scripts/build-offline-images.sh
// built (this test builds none): skipped, saying why, where no Docker engine answers or the
// images are not there. METABENCH_OFFLINE_ENV names the env file when it is not this
// checkout's docker/offline.env (the script writes it into the checkout it ran in).

const PROJECT = 'metabench-conformance';
const ENV_FILE = process.env.METABENCH_OFFLINE_ENV || join(REPO, 'docker', 'offline.env');
const docker = dockerClient();

async function whyNot(): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message})`;
  }
  if (
    spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status !== 0 &&
    spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status !== 0
  )
    return 'neither `docker compose` nor `docker-compose` is installed';
  if (!existsSync(ENV_FILE))
    return `${ENV_FILE} is absent: run scripts/build-offline-images.sh (or set METABENCH_OFFLINE_ENV)`;
  for (const [name, image] of Object.entries(parseEnvFile(readFileSync(ENV_FILE, 'utf8'))))
    if (name.endsWith('_IMAGE'))
      try {
        await docker.getImage(image).inspect();
      } catch {
        return `${image} (${name} in ${ENV_FILE}) is not built: run scripts/build-offline-images.sh`;
      }
  return undefined;
}

const skip = await whyNot();
if (skip) process.stderr.write(`lab-conformance-docker: skipped: ${skip}\n`);
else
  // Free loopback ports, so the lab never meets another on this machine (compose reads them from the environment).
  for (const s of ['API', 'REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS', 'LLM'])
    process.env[`METABENCH_${s}_PORT`] = String(await freePort('127.0.0.1'));

const compose = { project: PROJECT, envFile: ENV_FILE };
const outlives = 'the compose project outlives a run until metabench lab down';
labConformance('docker', {
  skip,
  docker: compose,
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
  'docker: lab down (compose down) leaves no container of the project',
  { skip: skip ?? false },
  async () => {
    await runCompose(compose, [
      '--profile',
      'llm',
      'down',
      '--remove-orphans',
      '--timeout',
      '5',
      '--volumes',
    ]);
    assert.deepEqual(await projectContainers(docker, PROJECT), []);
  },
);
