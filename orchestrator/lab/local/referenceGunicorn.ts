import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkPythonModule, findReferenceBinary, GUNICORN } from './binaries.js';
import { freePort } from './dataServices.js';
import { spawnNginx, writeNginxConf } from './referenceNginx.js';
import {
  httpGet,
  referenceTempDir,
  REFERENCE_DIR,
  removeDir,
  spawnGuarded,
  stopGuarded,
  waitHealthy,
  waitListening,
} from './referenceProcess.js';
import { predictedCapacityPerS, type ReferenceOptions, type ReferenceServer } from './referenceServer.js';

const HOST = '127.0.0.1';

/**
 * gunicorn with c sync workers running services/reference/gunicorn/app.py, behind nginx
 * (services/reference/nginx/front.conf with gunicorn/nginx-locations.conf), as gunicorn's
 * deployment documentation
 * recommends: both on loopback, nginx on the load's port, gunicorn on a port of its own.
 * gunicorn's metrics (prometheus_client's multiprocess mode, files in the temporary
 * directory) are served by its master on a port of their own, so a scrape answers while
 * every worker is busy; busy workers and completions are its workers', the queue its accept
 * queue's (the kernel's /proc/net/tcp), and received is nginx's requests (stub_status, which
 * gunicorn_conf.py reads when METABENCH_NGINX_STATUS_URL names it), as for PHP-FPM: the
 * connections past a full accept queue are dropped before gunicorn could count them, but
 * nginx has read their requests. The Docker image (docker/offline/reference-entrypoint.sh)
 * serves the same /metrics from the same file.
 */
export async function startGunicorn(o: ReferenceOptions): Promise<ReferenceServer> {
  const gunicorn = findReferenceBinary(GUNICORN);
  checkPythonModule(gunicorn, 'prometheus_client', 'python3-prometheus-client');
  const log = o.log ?? (() => undefined);
  const dir = referenceTempDir('gunicorn');
  const started: { child: import('node:child_process').ChildProcess; tail: () => string }[] = [];
  const stop = async (): Promise<void> => {
    // nginx first: no new request reaches gunicorn while it stops.
    for (const s of [...started].reverse()) await stopGuarded(s.child);
    removeDir(dir);
  };
  try {
    const port = o.port || (await freePort(HOST));
    const metricsPort = o.metricsPort || (await freePort(HOST));
    const upstreamPort = await freePort(HOST);
    const prom = join(dir, 'prometheus');
    mkdirSync(prom);
    const app = join(REFERENCE_DIR, 'gunicorn');
    const env = {
      ...process.env,
      PROMETHEUS_MULTIPROC_DIR: prom,
      METABENCH_HOST: HOST,
      // gunicorn's own port: its accept queue is read for this one (gunicorn_conf.py).
      METABENCH_PORT: String(upstreamPort),
      METABENCH_METRICS_PORT: String(metricsPort),
      // received from nginx: its count, less the status reads gunicorn's metrics server makes.
      METABENCH_NGINX_STATUS_URL: `http://${HOST}:${port}/nginx-status`,
      METABENCH_WORK_MS: String(o.workMs),
      METABENCH_CPU_MS: String(o.cpuMs ?? 0),
      // No __pycache__ written into the repository.
      PYTHONDONTWRITEBYTECODE: '1',
    };
    started.push(
      spawnGuarded(
        'gunicorn',
        gunicorn,
        [
          '--config',
          join(app, 'gunicorn_conf.py'),
          '--chdir',
          app,
          '--workers',
          String(o.workers),
          '--worker-class',
          'sync',
          '--bind',
          `${HOST}:${upstreamPort}`,
          '--backlog',
          '4096',
          // No worker killed for a long request: the work is declared, its length is the experiment's.
          '--timeout',
          '0',
          '--worker-tmp-dir',
          dir,
          'app:application',
        ],
        // gunicorn stops last: its guard removes the directory, even if metabench was killed.
        { env, log, removeDir: dir },
      ),
    );
    // nginx only once gunicorn listens: a request it forwarded before that would be a 502
    // that nginx counted as received and no worker completed.
    await waitListening('gunicorn', HOST, upstreamPort, started);
    const nginxConf = writeNginxConf('gunicorn', dir, {
      dir,
      host: HOST,
      listenHost: HOST,
      port,
      upstreamPort,
    });
    started.push(spawnNginx(dir, nginxConf, log));
    const url = `http://${HOST}:${port}`;
    await waitHealthy('nginx and gunicorn', `${url}/health`, started);
    // Once nginx answers: the metrics need its status page.
    const metricsUrl = `http://${HOST}:${metricsPort}/metrics`;
    await waitHealthy('gunicorn metrics', metricsUrl, started);
    return {
      kind: 'gunicorn',
      url: `${url}/`,
      healthUrl: `${url}/health`,
      metricsUrl,
      predictedCapacityPerS: predictedCapacityPerS(o.workers, o.workMs, o.cpuMs),
      pids: started.map((s) => s.child.pid!),
      tempDir: dir,
      scrapeText: (timeoutMs = 800) => httpGet(metricsUrl, timeoutMs),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
