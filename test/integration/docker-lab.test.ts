import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type Docker from 'dockerode';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import {
  dockerClient,
  engineAddress,
  inspectContainer,
  projectContainers,
} from '../../orchestrator/lab/docker/engine.js';
import { freePort } from '../../orchestrator/lab/local/dataServices.js';
import { REPO, runCli, startCli, tempDir } from '../helpers/cli.js';

// The Docker lab end to end, on the offline images (scripts/build-offline-images.sh builds
// what is missing or stale): lab up, the retry storm at --scale 0.2 with the docker runtime,
// lab down. Skipped, with the reason, where no Docker engine answers.

const PROJECT = 'metabench-e2e';
const ENV_FILE = join(REPO, 'docker', 'offline.env');

async function engineAnswers(docker: Docker): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message}); .ci/run starts one where it can`;
  }
  for (const [bin, args] of [
    ['docker', ['compose', 'version']],
    ['docker-compose', ['version']],
  ] as const)
    if (spawnSync(bin, args, { stdio: 'ignore' }).status === 0) return undefined;
  return 'neither `docker compose` nor `docker-compose` is installed';
}

test('docker lab: the retry storm runs on the Compose lab, its pause going through the Docker API', async (t) => {
  const docker = dockerClient();
  const why = await engineAnswers(docker);
  if (why) {
    t.diagnostic(`skipped: ${why}`);
    t.skip(why);
    return;
  }
  const t0 = Date.now();
  const build = spawnSync(join(REPO, 'scripts', 'build-offline-images.sh'), { cwd: REPO, encoding: 'utf8' });
  assert.equal(build.status, 0, `build-offline-images.sh: ${build.stderr}`);
  t.diagnostic(`images ready in ${((Date.now() - t0) / 1000).toFixed(0)} s`);

  // Free loopback ports, so the lab never meets another on this machine.
  const ports: Record<string, string> = {};
  for (const s of ['API', 'REDIS', 'POSTGRES', 'TOXIPROXY', 'PROMETHEUS'])
    ports[`METABENCH_${s}_PORT`] = String(await freePort('127.0.0.1'));
  const env = { ...ports, METABENCH_STATE_DIR: tempDir('docker-state') };
  const common = ['--runtime', 'docker', '--project', PROJECT, '--env-file', ENV_FILE];

  let events: { stop: () => string[] } | undefined;
  try {
    const up = await runCli(['lab', 'up', ...common, '--no-grafana'], env);
    assert.equal(up.code, 0, up.stderr);
    assert.match(up.stdout, /^api\s+running\s+healthy\s+127\.0\.0\.1:\d+/m);
    assert.match(up.stdout, /^toxiproxy\s+running\s+healthy/m);
    const status = await runCli(['lab', 'status', ...common], env);
    assert.match(status.stdout, /^prometheus\s+running\s+healthy/m);
    t.diagnostic(`lab up after ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    // While the run goes, watch the api container's state through the Engine API.
    const out = join(tempDir('docker-run'), 'out');
    // A stand-in Grafana on loopback, to see the annotations the run posts.
    const annotations: { time: number; timeEnd: number; tags: string[] }[] = [];
    const grafana = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/api/annotations') annotations.push(JSON.parse(body));
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":1}');
      });
    });
    await new Promise<void>((r) => grafana.listen(0, '127.0.0.1', () => r()));
    const gaddr = grafana.address();
    const grafanaUrl = `http://127.0.0.1:${typeof gaddr === 'object' && gaddr ? gaddr.port : 0}`;
    // The engine's pause/unpause events of the api, live (its ring buffer is too short for a
    // lookup afterwards: the healthchecks fill it).
    events = await watchEvents(docker);
    const run = startCli(
      // Two workers (the rate follows: 70% capacity = 70/s): the same storm at a quarter of the
      // requests, because the lab's containers run at dockerd's low priority on a shared machine.
      [
        'run',
        'experiments/retry-storm.yaml',
        '--scale',
        '0.2',
        '--set',
        'lab.api.workers=2',
        '--out',
        out,
        '--quiet',
        '--grafana-url',
        grafanaUrl,
        ...common,
      ],
      env,
    );
    const states = new Set<string>();
    let finished = false;
    void run.done.then(() => (finished = true));
    while (!finished) {
      const api = (await projectContainers(docker, PROJECT)).find((c) => c.service === 'api');
      if (api) states.add(api.state);
      await new Promise((r) => setTimeout(r, 200));
    }
    const r = await run.done;
    grafana.close();
    assert.equal(r.code, 0, r.stderr);
    t.diagnostic(`run done after ${((Date.now() - t0) / 1000).toFixed(0)} s`);

    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
    assert.equal(s.usable, true);
    assert.equal(s.offered, s.recorded);
    assert.equal(s.trigger.kind, 'pause');
    assert.equal(s.metastable, true, `verdict: ${s.recoveryReason}`);
    assert.ok(s.afterTrigger.amplification! >= 2, `amplification ${s.afterTrigger.amplification}`);
    const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
      runtime: string;
      topology: { components: { name: string; config: { project?: string; image?: string } }[] };
    };
    assert.equal(manifest.runtime, 'docker');
    // Grafana got the run's span and the pause's window, at the times summary.json gives.
    assert.deepEqual(
      annotations.map((a) => a.tags.slice(0, 3)),
      [
        ['metabench', 'run', 'retry-storm'],
        ['metabench', 'trigger', 'pause'],
      ],
    );
    const [span, pause] = annotations as [(typeof annotations)[0], (typeof annotations)[0]];
    assert.ok(
      Math.abs(pause.timeEnd - pause.time - (s.trigger.endS - s.trigger.startS) * 1000) < 2,
      `pause window ${pause.time}..${pause.timeEnd} vs ${JSON.stringify(s.trigger)}`,
    );
    assert.ok(Math.abs(pause.time - span.time - s.trigger.startS * 1000) < 2, 'the pause sits in the run');
    assert.equal(manifest.topology.components[0]!.config.project, PROJECT);
    assert.ok(existsSync(join(out, 'report.md')));
    // CPU and memory per container, read from the host's /proc for the containers' processes.
    const header = readFileSync(join(out, 'run-1', 'timeseries.csv'), 'utf8')
      .split('\n')[0]!
      .split(',');
    for (const col of ['proc_api_cpu', 'proc_api_rss_bytes', 'proc_faultproxy_rss_bytes'])
      assert.ok(header.includes(col), `timeseries.csv has ${col}`);

    // The pause and the resume went through the Docker API: seen paused, and the engine's events.
    assert.ok(states.has('paused'), `api states seen during the run: ${[...states].join(', ')}`);
    const api = (await projectContainers(docker, PROJECT)).find((c) => c.service === 'api')!;
    assert.equal(api.state, 'running', 'resumed at the end');
    assert.deepEqual(events.stop(), ['pause', 'unpause']);
    events = undefined;

    // Prometheus (in a container) scraped the orchestrator's live metrics through host-gateway.
    const q = await fetch(
      `http://127.0.0.1:${ports.METABENCH_PROMETHEUS_PORT}/api/v1/query?query=${encodeURIComponent('max_over_time(metabench_offered_total[10m])')}`,
    );
    const body = (await q.json()) as { data: { result: { value: [number, string] }[] } };
    assert.ok(
      Number(body.data.result[0]?.value[1] ?? 0) > 0,
      `Prometheus saw the run: ${JSON.stringify(body)}`,
    );

    // After a crash: a journal left by a dead orchestrator is undone through the Engine API.
    // A killed container stays down despite `restart: unless-stopped` until the recipe starts it.
    const redis = (await projectContainers(docker, PROJECT)).find((c) => c.service === 'redis')!;
    await docker.getContainer(api.id).pause();
    await docker.getContainer(redis.id).kill({ signal: 'SIGKILL' });
    await new Promise((r) => setTimeout(r, 3000));
    assert.equal(
      (await inspectContainer(docker, redis.id)).state,
      'exited',
      'no restart after a kill through the API',
    );
    const journal = join(env.METABENCH_STATE_DIR, 'journal');
    mkdirSync(journal, { recursive: true });
    const engine = engineAddress();
    const entry = (id: string, action: 'unpause' | 'start', container: string, what: string): object => ({
      id,
      appliedAt: new Date().toISOString(),
      undo: { kind: 'docker', action, container, engine, what },
    });
    writeFileSync(
      join(journal, '999999999.json'),
      JSON.stringify({
        owner: { pid: 999_999_999, startTicks: null },
        entries: [entry('a', 'unpause', api.id, 'resume api'), entry('b', 'start', redis.id, 'start redis')],
      }),
    );
    const reset = await runCli(['lab', 'reset'], env);
    assert.equal(reset.code, 0, reset.stderr);
    assert.match(reset.stderr, /resume api: docker unpause \(HTTP 204\)/);
    assert.match(reset.stderr, /start redis: docker start \(HTTP 204\)/);
    assert.equal((await inspectContainer(docker, api.id)).state, 'running');
    assert.equal((await inspectContainer(docker, redis.id)).state, 'running');
  } finally {
    events?.stop();
    const down = await runCli(['lab', 'down', ...common], env);
    assert.equal(down.code, 0, down.stderr);
    const left = await projectContainers(docker, PROJECT);
    assert.deepEqual(left, [], 'lab down removed every container');
    t.diagnostic(`wall time ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  }
});

/** Collects the api's pause/unpause events from now until stop() (which returns them, in order). */
async function watchEvents(docker: Docker): Promise<{ stop: () => string[] }> {
  const stream = (await docker.getEvents({
    filters: {
      type: ['container'],
      event: ['pause', 'unpause'],
      label: [`com.docker.compose.project=${PROJECT}`, 'com.docker.compose.service=api'],
    },
  })) as NodeJS.ReadableStream & { destroy: () => void };
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return {
    stop: () => {
      stream.destroy();
      return text
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { Action?: string }).Action ?? '');
    },
  };
}
