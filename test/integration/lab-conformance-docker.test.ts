import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { runCompose } from '../../orchestrator/lab/engine/compose.js';
import { dockerClient, engineAddress, projectContainers } from '../../orchestrator/lab/engine/engine.js';
import { portTaken } from '../../orchestrator/lab/docker/ports.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { OFFLINE_ENV_FILE, offlineImagesMissing } from '../helpers/offlineImages.js';
import { REPO, startCli, tempDir } from '../helpers/cli.js';
import { readSeries, sum } from '../helpers/experiment.js';
import { labConformance } from '../helpers/labConformance.js';
import { apiLinkConformance } from '../helpers/apiLinkConformance.js';
import { apiService } from '../../orchestrator/lab/engine/replicas.js';
import { watchComposeEvents } from '../helpers/dockerEvents.js';

// The Lab conformance suite on the docker runtime, on the images scripts/build-offline-images.sh
// built (this test builds none): skipped, saying why, where no Docker engine answers or the
// images are not there. METABENCH_OFFLINE_ENV names the env file when it is not this
// checkout's docker/offline.env (the script writes it into the checkout it ran in). Then a
// run of two api replicas with a pause of api[1] (issue 19), on the same project: the
// dependencies' containers are already there, so only the api replicas are created. Between
// them, the api link's conformance (its override recreates toxiproxy with the links' ports).

const PROJECT = 'metabench-conformance';
const ENV_FILE = OFFLINE_ENV_FILE;
const FIXTURE = join(REPO, 'test/fixtures/experiments/replicas-pause.yaml');
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
  const missing = await offlineImagesMissing(docker, ENV_FILE);
  if (missing) return missing;
  return undefined;
}

/** A free loopback port whose next one is free too (api replica i publishes METABENCH_API_PORT + i). */
async function twoFreePorts(): Promise<number> {
  for (;;) {
    const p = await freePort('127.0.0.1');
    if (p < 65535 && !(await portTaken('127.0.0.1', p + 1))) return p;
  }
}

const skip = await whyNot();
if (skip) process.stderr.write(`lab-conformance-docker: skipped: ${skip}\n`);
else {
  // Free loopback ports, so the lab never meets another on this machine (compose reads them from the environment).
  for (const s of ['REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS', 'LLM'])
    process.env[`METABENCH_${s}_PORT`] = String(await freePort('127.0.0.1'));
  process.env.METABENCH_API_PORT = String(await twoFreePorts());
}

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

// The clients' link to the api (link api, api[i]): a proxy per replica in the toxiproxy
// container, published on loopback, dialling the replica's service on the compose network.
apiLinkConformance(
  'docker',
  // A killed replica's name stays unresolved until the host's resolvers give up (10 s on a machine without one).
  { scrape: true, upstream: (i) => `${apiService(i)}:8080`, killedResetMs: 30_000 },
  { skip, docker: compose },
);

test(
  'docker: two api replicas, a pause of api[1] freezes its container alone and api[0] keeps serving',
  { skip: skip ?? false },
  async (t) => {
    const common = ['--runtime', 'docker', '--project', PROJECT, '--env-file', ENV_FILE];
    const out = join(tempDir('docker-replicas'), 'out');
    const t0 = Date.now();
    const events = await watchComposeEvents(docker, PROJECT, [
      'pause',
      'unpause',
      'kill',
      'stop',
      'die',
      'start',
    ]);
    let happened: string[] | undefined;
    try {
      const run = startCli(
        [
          'run',
          '--any-scale',
          FIXTURE,
          // The pause goes through dockerd, which CI runs at nice 19 behind the lab (see
          // docker-lab.test.ts): the on-time limit is the engine's, not a local SIGSTOP's.
          '--set',
          'validity.triggerOnTime=1s',
          // Its subject is which container the trigger reached, not timing: right after the
          // conformance suite, with dockerd recreating containers on a shared 2-core machine,
          // one run's first-attempt lag p99 was 63 ms against the default 20 ms limit.
          '--set',
          'validity.lagP99=250ms',
          '--out',
          out,
          '--quiet',
          ...common,
        ],
        {},
      );
      // Each api container's states while the run goes on (by id: the lab's up replaces the api's), as the engine reports them.
      const seen: Record<string, Set<string>> = {};
      let finished = false;
      void run.done.then(() => (finished = true));
      while (!finished) {
        for (const c of await projectContainers(docker, PROJECT))
          if (c.service.startsWith('api')) (seen[c.id] ??= new Set()).add(c.state);
        // Twice a second: the 3 s pause is seen, and dockerd is not kept busy inspecting.
        await new Promise((r) => setTimeout(r, 500));
      }
      const r = await run.done;
      happened = events.stop();
      assert.equal(r.code, 0, r.stderr);
      t.diagnostic(`run done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);

      // The lab's up (re)creates both api containers (the conformance suite's api goes), and
      // starts each once; from then on the engine paused and unpaused api[1]'s container
      // (service api1) and nothing else: no other pause, no api container killed or stopped.
      const up = Math.max(happened.indexOf('api start'), happened.indexOf('api1 start'));
      assert.ok(
        happened.includes('api start') && happened.includes('api1 start'),
        `engine events: ${happened.join(', ')}`,
      );
      assert.deepEqual(
        happened.slice(up + 1),
        ['api1 pause', 'api1 unpause'],
        `engine events: ${happened.join(', ')}`,
      );
      assert.ok(!happened.some((e) => / (un)?pause$/.test(e) && !e.startsWith('api1 ')));
      // The api link's suite before it published toxiproxy's links; this run has no link, so
      // compose recreated toxiproxy without them (before the replicas start).
      const proxyStart = happened.indexOf('toxiproxy start');
      assert.ok(proxyStart >= 0 && proxyStart < up, `engine events: ${happened.join(', ')}`);
      const apis = new Map(
        (await projectContainers(docker, PROJECT))
          .filter((c) => c.service.startsWith('api'))
          .map((c) => [c.service, c]),
      );
      const api1 = [...(seen[apis.get('api1')?.id ?? ''] ?? [])];
      assert.ok(api1.includes('paused'), `api1 states: ${api1.join(', ')}`);
      // api[0]'s container went from created to running, no further.
      assert.deepEqual(
        [...(seen[apis.get('api')?.id ?? ''] ?? [])].filter((x) => x !== 'created'),
        ['running'],
        'api[0] was never anything but running',
      );

      // Each replica served, on its own port, and was scraped on its own.
      const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
      const trig = s.triggers[0]!;
      assert.equal(trig.target, 'api[1]');
      assert.equal(trig.error, undefined);
      assert.equal(trig.undoError, undefined);
      const rows = readSeries(out);
      assert.ok(sum(rows, 'api0_received', 2, 6) > 40 && sum(rows, 'api1_received', 2, 6) > 40);
      const inside = rows.filter(
        (x) =>
          (x['t_s'] as number) >= Math.ceil(trig.startS) && (x['t_s'] as number) < Math.floor(trig.endS) - 1,
      );
      assert.ok(inside.length >= 1, `seconds inside the pause: ${trig.startS}–${trig.endS}`);
      for (const x of inside) {
        assert.ok(
          x['api1_completed'] === null || x['api1_completed'] === 0,
          `api[1] at ${x['t_s']} s: ${x['api1_completed']}`,
        );
        assert.ok((x['api0_completed'] as number) >= 10, `api[0] at ${x['t_s']} s: ${x['api0_completed']}`);
      }
      assert.ok(sum(rows, 'api1_completed', Math.ceil(trig.endS) + 1, Math.ceil(trig.endS) + 5) > 40);
      const m = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
        topology: { components: { name: string; replicas?: { url: string }[] }[] };
      };
      const api = m.topology.components.find((c) => c.name === 'api')!;
      assert.deepEqual(
        api.replicas?.map((x) => x.url),
        [0, 1].map((i) => `http://127.0.0.1:${Number(process.env.METABENCH_API_PORT) + i}`),
      );
      // The run leaves both replicas' containers up and running (the lab outlives a run):
      // the next test's compose down removes api1 too, an orphan of docker-compose.yml.
      assert.deepEqual(
        [...apis.values()].map((c) => [c.service, c.state]),
        [
          ['api', 'running'],
          ['api1', 'running'],
        ],
      );
    } finally {
      if (!happened) events.stop();
      t.diagnostic(`replica run done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    }
  },
);

test(
  'docker: lab down (compose down) leaves no container of the project',
  { skip: skip ?? false },
  async () => {
    assert.ok((await projectContainers(docker, PROJECT)).length > 0, 'the project has containers to remove');
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
