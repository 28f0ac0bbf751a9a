import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { parseEnvFile } from '../../orchestrator/lab/engine/images.js';
import { parseNginxRequests } from '../../orchestrator/lab/local/referenceMetrics.js';
import { httpGet } from '../../orchestrator/lab/local/referenceProcess.js';
import { REPO } from '../helpers/cli.js';
import { OFFLINE_ENV_FILE } from '../helpers/offlineImages.js';
import {
  assertAtRest,
  describeCapacity,
  measureCapacity,
  scrape,
  SERIES,
  within10,
  type MeasuredServer,
} from '../helpers/referenceCapacity.js';

// The reference labs' Docker images (issue 34, point 3: "their Docker images build offline"):
// scripts/build-offline-images.sh builds them from Debian's packages on the debootstrap'd root
// (seconds when nothing changed), then each runs as a container with c = 4 and S = 100 ms, its
// ports published to 127.0.0.1, and the bench's open-loop load at 1.5 × c / S measures it: the
// completions per second its own series count are within 10% of c / S (40/s); its /metrics has
// the bench's series names; a docker stop ends it on SIGTERM; and no container is left. An image
// refuses a missing setting with exit code 2 before starting anything. php-fpm and gunicorn run
// behind nginx, as on the local runtime: their answers carry nginx's Server header, and a request
// nginx answers itself (its status page) is received and never completed, received being nginx's
// count. Skipped, with the reason, where no Docker engine answers.
//
// METABENCH_IMAGES_PREBUILT=1 runs the images named in the offline env file (docker/offline.env,
// or METABENCH_OFFLINE_ENV's) without running the build script first (one image rebuilt by hand);
// METABENCH_REFERENCE_KINDS=gunicorn,jvm runs only those.

const C = 4;
const WORK_MS = 100;
const PREDICTED = C / (WORK_MS / 1000);
const LABEL = 'metabench.test=reference-images';
const ALL_KINDS = ['php-fpm', 'gunicorn', 'jvm'] as const;
type Kind = (typeof ALL_KINDS)[number];
const KINDS = ALL_KINDS.filter((k) =>
  (process.env['METABENCH_REFERENCE_KINDS'] ?? ALL_KINDS.join(',')).split(',').includes(k),
);
const PREBUILT = process.env['METABENCH_IMAGES_PREBUILT'] === '1';

const IMAGE_VAR: Record<Kind, string> = {
  'php-fpm': 'METABENCH_REF_PHP_FPM_IMAGE',
  gunicorn: 'METABENCH_REF_GUNICORN_IMAGE',
  jvm: 'METABENCH_REF_JVM_IMAGE',
};
/** Each server's own series beside the bench's (docs/lab.md). */
const OWN_SERIES: Record<Kind, string> = {
  'php-fpm': 'phpfpm_accepted_connections_total',
  gunicorn: 'gunicorn_requests_received_total',
  jvm: 'jvm_gc_time_seconds_total',
};
/** The servers nginx fronts (its Server header on their answers, its stub_status on the load's port). */
const BEHIND_NGINX: Record<Kind, boolean> = { 'php-fpm': true, gunicorn: true, jvm: false };
const SETTINGS: Record<Kind, Record<string, string>> = {
  'php-fpm': {},
  gunicorn: {},
  jvm: { METABENCH_JVM_HEAP_MB: '128', METABENCH_JVM_ALLOC_BYTES: String(16 * 1024) },
};

const run = promisify(execFile);
const docker = async (...args: string[]): Promise<string> =>
  (await run('docker', args, { maxBuffer: 16 * 1024 * 1024 })).stdout.trim();

function engineMissing(): string | undefined {
  const r = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8' });
  if (r.error) return `the docker CLI is not installed (${r.error.message})`;
  if (r.status !== 0)
    return `no Docker engine answers (${r.stderr.trim().split('\n')[0]}); .ci/run starts one where it can`;
  return undefined;
}

/** The host's loopback port a container port is published on. */
async function published(id: string, port: number): Promise<number> {
  const out = await docker('port', id, `${port}/tcp`);
  const m = /^127\.0\.0\.1:(\d+)$/m.exec(out);
  assert.ok(m, `port ${port} published on 127.0.0.1 only: ${out}`);
  return Number(m[1]);
}

/** Waits for /health to answer 200; fails at once, with its log, if the container stops. */
async function waitHealthy(id: string, url: string): Promise<void> {
  const until = performance.now() + 60_000;
  let last = '';
  while (performance.now() < until) {
    if ((await docker('inspect', '-f', '{{.State.Running}}', id)) !== 'true')
      assert.fail(
        `the container stopped while starting; its log:\n${await docker('logs', id).catch(() => '')}`,
      );
    try {
      await httpGet(url, 2000);
      return;
    } catch (err) {
      last = (err as Error).message;
      await sleep(200);
    }
  }
  assert.fail(`${url} did not answer within 60 s (${last})`);
}

/**
 * Sets every thread of the container's processes, and of the docker-proxy processes that
 * forward its published ports, to the lab's niceness 0, as the local runtime's servers run.
 * Why: .ci/run starts dockerd under `nice -n 19` (so image builds do not disturb the lab tests),
 * and a container's processes inherit it; on a busy machine they then get a sliver of a core
 * (before this, at a load average of 14, a scrape of php-fpm's /metrics timed out at 2 s), and a
 * measurement of their capacity would measure the neighbours. Returns what it did, for the log.
 */
async function labNiceness(id: string): Promise<string> {
  const ip = await docker('inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', id);
  const pids = (await docker('top', id, '-eo', 'pid'))
    .split('\n')
    .slice(1)
    .map((l) => Number(l.trim()))
    .filter((p) => Number.isInteger(p) && p > 0);
  for (const name of readdirSync('/proc'))
    if (/^\d+$/.test(name))
      try {
        const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
        if (args[0]?.endsWith('docker-proxy') && args[args.indexOf('-container-ip') + 1] === ip)
          pids.push(Number(name));
      } catch {
        /* ended meanwhile */
      }
  let set = 0;
  const refused: string[] = [];
  for (const pid of pids)
    for (const tid of readdirSync(`/proc/${pid}/task`))
      try {
        setPriority(Number(tid), 0);
        set++;
      } catch (err) {
        refused.push(`${tid}: ${(err as Error).message}`);
      }
  return `${set} threads of ${pids.length} processes at niceness 0${refused.length ? `; refused: ${refused.slice(0, 3).join(', ')}` : ''}`;
}

/**
 * nginx ending inside a container (its master sent TERM) ends the container: the entry point
 * stops the pool with it, rather than leave a server no load reaches.
 */
async function assertEndsWithNginx(image: string, env: Record<string, string>): Promise<void> {
  const id = await docker(
    'run',
    '-d',
    '--network',
    'none',
    '--label',
    LABEL,
    ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
    image,
  );
  try {
    const pidFile = '/run/metabench/nginx.pid';
    const until = performance.now() + 60_000;
    while (spawnSync('docker', ['exec', id, 'test', '-s', pidFile]).status !== 0) {
      assert.ok(performance.now() < until, `nginx started within 60 s: ${await docker('logs', id)}`);
      await sleep(200);
    }
    await docker('exec', id, 'sh', '-c', `kill -TERM "$(cat ${pidFile})"`);
    const code = (await run('docker', ['wait', id], { timeout: 20_000 })).stdout.trim();
    const log = (await run('docker', ['logs', id])).stderr;
    assert.match(log, /exited \(code \d+\): stopping the others/);
    console.log(`nginx ended: the container ended with code ${code}`);
  } finally {
    await docker('rm', '-f', id).catch(() => '');
  }
}

test(
  'reference images: built offline, each runs as a container at c/S within 10%, exports the series, stops on SIGTERM, leaves nothing',
  { timeout: 30 * 60_000 },
  async (t) => {
    const why = engineMissing();
    if (why) {
      t.diagnostic(`skipped: ${why}`);
      t.skip(why);
      return;
    }
    const t0 = Date.now();
    // Asynchronously: a build of minutes must not block the event loop.
    if (!PREBUILT)
      await run(join(REPO, 'scripts', 'build-offline-images.sh'), [], {
        cwd: REPO,
        maxBuffer: 64 * 1024 * 1024,
      }).catch((err: { stderr?: string; message: string }) =>
        assert.fail(`build-offline-images.sh: ${err.stderr ?? err.message}`),
      );
    console.log(`images ready in ${((Date.now() - t0) / 1000).toFixed(0)} s${PREBUILT ? ' (prebuilt)' : ''}`);
    const images = parseEnvFile(readFileSync(OFFLINE_ENV_FILE, 'utf8'));

    try {
      for (const kind of KINDS)
        await t.test(kind, async () => {
          const image = images[IMAGE_VAR[kind]];
          assert.ok(image, `${IMAGE_VAR[kind]} in ${OFFLINE_ENV_FILE}`);
          const config = JSON.parse(await docker('image', 'inspect', '-f', '{{json .Config}}', image)) as {
            Entrypoint: string[];
            ExposedPorts: Record<string, object>;
          };
          assert.deepEqual(config.Entrypoint, ['/usr/local/bin/reference-entrypoint.sh', kind]);
          assert.deepEqual(Object.keys(config.ExposedPorts).sort(), ['8080/tcp', '9100/tcp']);
          const size = Number(await docker('image', 'inspect', '-f', '{{.Size}}', image));
          console.log(`${image}: ${(size / 1e6).toFixed(0)} MB`);

          // Work not declared: refused before anything starts, naming the setting.
          const refused = spawnSync('docker', ['run', '--rm', '--network', 'none', '--label', LABEL, image], {
            encoding: 'utf8',
          });
          assert.equal(refused.status, 2, refused.stderr);
          assert.match(refused.stderr, /METABENCH_WORKERS is required/);

          const started = performance.now();
          const env = { METABENCH_WORKERS: String(C), METABENCH_WORK_MS: String(WORK_MS), ...SETTINGS[kind] };
          const id = await docker(
            'run',
            '-d',
            '--label',
            LABEL,
            '-p',
            '127.0.0.1::8080',
            '-p',
            '127.0.0.1::9100',
            ...Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]),
            image,
          );
          try {
            const base = `http://127.0.0.1:${await published(id, 8080)}`;
            const metricsUrl = `http://127.0.0.1:${await published(id, 9100)}/metrics`;
            await waitHealthy(id, `${base}/health`);
            console.log(
              `${kind}: up in ${((performance.now() - started) / 1000).toFixed(1)} s; ${await labNiceness(id)}`,
            );
            const server: MeasuredServer = {
              url: `${base}/`,
              scrapeText: (ms = 800) => httpGet(metricsUrl, ms),
            };
            const res = await fetch(server.url);
            assert.equal(res.status, 200);
            assert.equal(await res.text(), 'ok\n');
            if (BEHIND_NGINX[kind])
              assert.match(res.headers.get('server') ?? '', /^nginx\//, `${kind}: nginx answers the load`);
            const m = await scrape(server);
            for (const name of [...SERIES, OWN_SERIES[kind]])
              assert.ok(m.has(name), `${kind} exports ${name}`);

            const cap = await measureCapacity(server, PREDICTED);
            console.log(describeCapacity(`${kind} (container)`, PREDICTED, cap));
            assert.equal(
              cap.load.success,
              1,
              `every request served (errors ${JSON.stringify(cap.load.errors)})`,
            );
            assert.ok(
              within10(cap.serverPerS, PREDICTED),
              `server-side capacity ${cap.serverPerS.toFixed(1)}/s vs ${PREDICTED}/s`,
            );
            assert.equal(cap.maxBusy, C, 'busy workers reached c');
            assert.ok(cap.maxQueue > C, `queue depth rose (${cap.maxQueue})`);
            assert.equal(cap.received, cap.load.requests, 'received counts each request once');
            await assertAtRest(server, kind);
            if (BEHIND_NGINX[kind]) {
              // A request nginx answers itself: received (nginx's count) by one, completed not.
              const before = await scrape(server);
              assert.ok(parseNginxRequests(await httpGet(`${base}/nginx-status`, 2000)) > cap.load.requests);
              const after = await scrape(server);
              const step = (name: string): number => after.get(name)! - before.get(name)!;
              assert.equal(
                step('api_requests_received_total'),
                1,
                `${kind}: nginx's status request received`,
              );
              assert.equal(step('api_requests_completed_total'), 0, `${kind}: and completed by no worker`);
            }

            // docker stop: SIGTERM ends every process of it well within the grace period (not
            // SIGKILL's 137).
            const stopping = performance.now();
            await docker('stop', '-t', '20', id);
            console.log(`${kind}: stopped in ${((performance.now() - stopping) / 1000).toFixed(1)} s`);
            const code = Number(await docker('inspect', '-f', '{{.State.ExitCode}}', id));
            assert.notEqual(code, 137, `${kind} was killed, not stopped by SIGTERM`);
          } finally {
            await docker('rm', '-f', id).catch(() => '');
          }
          if (BEHIND_NGINX[kind]) await assertEndsWithNginx(image, env);
        });
    } finally {
      const left = await docker('ps', '-a', '-q', '--filter', `label=${LABEL}`);
      if (left) await docker('rm', '-f', ...left.split('\n')).catch(() => '');
      assert.equal(left, '', 'no container of the test is left');
    }
  },
);
