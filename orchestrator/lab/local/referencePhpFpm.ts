import { copyFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { findReferenceBinary, PHP_FPM } from './binaries.js';
import { freePort } from './dataServices.js';
import { fpmStatusAsPrometheus, parseFpmStatus } from './referenceMetrics.js';
import { NginxReceived, spawnNginx, writeNginxConf } from './referenceNginx.js';
import {
  referenceTempDir,
  REFERENCE_DIR,
  removeDir,
  spawnGuarded,
  stopGuarded,
  waitHealthy,
  waitListening,
  writeTemplate,
} from './referenceProcess.js';
import { predictedCapacityPerS, type ReferenceOptions, type ReferenceServer } from './referenceServer.js';

const HOST = '127.0.0.1';

/**
 * nginx in front of php-fpm with a static pool of c children (services/reference/php-fpm/,
 * nginx's configuration from nginx/front.conf with php-fpm/nginx-locations.conf):
 * both on loopback, configured in a temporary directory (nothing system-wide read or
 * written: php-fpm without php.ini, nginx with its error log on stderr). As root, the pool
 * runs as www-data (php-fpm refuses a root pool) and nginx's worker as nobody.
 */
export async function startPhpFpm(o: ReferenceOptions): Promise<ReferenceServer> {
  const fpm = findReferenceBinary(PHP_FPM);
  const log = o.log ?? (() => undefined);
  const dir = referenceTempDir('php-fpm');
  const started: { child: import('node:child_process').ChildProcess; tail: () => string }[] = [];
  const stop = async (): Promise<void> => {
    // nginx first: no new request reaches the pool while it stops.
    for (const s of [...started].reverse()) await stopGuarded(s.child);
    removeDir(dir);
  };
  try {
    copyFileSync(join(REFERENCE_DIR, 'php-fpm', 'work.php'), join(dir, 'work.php'));
    const port = o.port || (await freePort(HOST));
    const fpmPort = await freePort(HOST);
    const fields = {
      dir,
      host: HOST,
      listenHost: HOST,
      port,
      fpmPort,
      workers: o.workers,
      workMs: o.workMs,
      cpuMs: o.cpuMs ?? 0,
      scripts: dir,
      user: poolUser(),
    };
    const fpmConf = writeTemplate('php-fpm/php-fpm.conf', dir, 'php-fpm.conf', fields);
    const nginxConf = writeNginxConf('php-fpm', dir, fields);
    started.push(
      spawnGuarded('php-fpm', fpm, ['-n', '-F', '-O', '-y', fpmConf], {
        log,
        // php-fpm stops last: its guard removes the directory, even if metabench was killed.
        removeDir: dir,
      }),
    );
    await waitListening('php-fpm', HOST, fpmPort, started);
    started.push(spawnNginx(dir, nginxConf, log));
    const url = `http://${HOST}:${port}`;
    await waitHealthy('nginx and php-fpm', `${url}/health`, started);
    const metricsUrl = `${url}/fpm-status`;
    const nginxStatus = new NginxReceived(`${url}/nginx-status`);
    const scrapeText = async (timeoutMs = 800): Promise<string> => {
      const fpmStatus = parseFpmStatus(await nginxStatus.get(metricsUrl, timeoutMs));
      return fpmStatusAsPrometheus(fpmStatus, await nginxStatus.received(timeoutMs));
    };
    return {
      kind: 'php-fpm',
      url: `${url}/`,
      healthUrl: `${url}/health`,
      metricsUrl,
      predictedCapacityPerS: predictedCapacityPerS(o.workers, o.workMs, o.cpuMs),
      pids: started.map((s) => s.child.pid!),
      tempDir: dir,
      scrapeText,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** As root, the pool's user and group lines (www-data, else nobody); otherwise none (php-fpm runs as us). */
function poolUser(): string {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return '';
  for (const user of ['www-data', 'nobody'])
    try {
      execFileSync('id', ['-u', user], { stdio: 'ignore' });
      const group = execFileSync('id', ['-gn', user]).toString().trim();
      return `user = ${user}\ngroup = ${group}`;
    } catch {
      /* no such user */
    }
  return '';
}
