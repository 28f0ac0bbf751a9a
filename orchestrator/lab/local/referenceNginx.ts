import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findReferenceBinary, NGINX } from './binaries.js';
import { parseNginxRequests } from './referenceMetrics.js';
import {
  fillTemplate,
  httpGet,
  REFERENCE_DIR,
  spawnGuarded,
  writeTemplate,
  type Log,
} from './referenceProcess.js';

/**
 * nginx in front of a reference server (PHP-FPM over FastCGI, gunicorn over HTTP), as both
 * are deployed: started from a configuration written in the lab's temporary directory, its
 * error log on stderr, and its stub_status read for what the lab received.
 */

/**
 * nginx's configuration for `server`: services/reference/nginx/front.conf (what every nginx
 * of the labs has: its one worker, its temporary paths in `dir`, the listen socket, stub_status)
 * with the server's own locations (`SERVER/nginx-locations.conf`), both filled in from
 * `fields`, written to `dir`/nginx.conf. Returns its path.
 */
export function writeNginxConf(
  server: 'php-fpm' | 'gunicorn',
  dir: string,
  fields: Readonly<Record<string, string | number>>,
): string {
  const text = readFileSync(join(REFERENCE_DIR, server, 'nginx-locations.conf'), 'utf8');
  const locations = fillTemplate(text, fields).trimEnd();
  return writeTemplate('nginx/front.conf', dir, 'nginx.conf', { ...fields, locations });
}

/** nginx on `conf` (a template already written to `dir`), under the guard. */
export function spawnNginx(dir: string, conf: string, log: Log): { child: ChildProcess; tail: () => string } {
  return spawnGuarded('nginx', findReferenceBinary(NGINX), ['-e', 'stderr', '-p', dir, '-c', conf], { log });
}

/**
 * What the lab received, as nginx counts it: its requests (stub_status, counted when nginx
 * reads a request: exact, and at arrival) less the requests metabench made through nginx
 * itself that are not load (its status pages). Each is counted before it is made: it reaches
 * nginx's counter as nginx reads it, whether or not its answer arrives in time.
 */
export class NginxReceived {
  private own = 0;

  constructor(private readonly statusUrl: string) {}

  /** A GET through nginx that is not load (a status page). */
  get(url: string, timeoutMs: number): Promise<string> {
    this.own++;
    return httpGet(url, timeoutMs);
  }

  /** nginx's requests less the ones this handle made (this read included). */
  async received(timeoutMs: number): Promise<number> {
    const requests = parseNginxRequests(await this.get(this.statusUrl, timeoutMs));
    return requests - this.own;
  }
}
