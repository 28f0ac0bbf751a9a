import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { checkPythonModule, findReferenceBinary, GUNICORN } from './binaries.js';
import { freePort } from './dataServices.js';
import {
  httpGet,
  referenceTempDir,
  REFERENCE_DIR,
  removeDir,
  spawnGuarded,
  stopGuarded,
  waitHealthy,
} from './referenceProcess.js';
import { predictedCapacityPerS, type ReferenceOptions, type ReferenceServer } from './referenceServer.js';

const HOST = '127.0.0.1';

/**
 * gunicorn with c sync workers running services/reference/gunicorn/app.py on loopback.
 * Its metrics (prometheus_client's multiprocess mode, files in the temporary directory)
 * are served by the master on a port of their own, so a scrape answers while every
 * worker is busy; the accept queue comes from the kernel (/proc/net/tcp), see
 * gunicorn_conf.py.
 */
export async function startGunicorn(o: ReferenceOptions): Promise<ReferenceServer> {
  const gunicorn = findReferenceBinary(GUNICORN);
  checkPythonModule(gunicorn, 'prometheus_client', 'python3-prometheus-client');
  const log = o.log ?? (() => undefined);
  const dir = referenceTempDir('gunicorn');
  const started: { child: import('node:child_process').ChildProcess; tail: () => string }[] = [];
  const stop = async (): Promise<void> => {
    for (const s of started) await stopGuarded(s.child);
    removeDir(dir);
  };
  try {
    const port = o.port || (await freePort(HOST));
    const metricsPort = o.metricsPort || (await freePort(HOST));
    const prom = join(dir, 'prometheus');
    mkdirSync(prom);
    const app = join(REFERENCE_DIR, 'gunicorn');
    const env = {
      ...process.env,
      PROMETHEUS_MULTIPROC_DIR: prom,
      METABENCH_HOST: HOST,
      METABENCH_PORT: String(port),
      METABENCH_METRICS_PORT: String(metricsPort),
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
          `${HOST}:${port}`,
          '--backlog',
          '4096',
          // No worker killed for a long request: the work is declared, its length is the experiment's.
          '--timeout',
          '0',
          '--worker-tmp-dir',
          dir,
          'app:application',
        ],
        { env, log, removeDir: dir },
      ),
    );
    const url = `http://${HOST}:${port}`;
    await waitHealthy('gunicorn', `${url}/health`, started);
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
