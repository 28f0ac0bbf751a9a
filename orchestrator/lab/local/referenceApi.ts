import { BenchError } from '../../../foundation/errors.js';
import { processTree } from '../proc/procUsage.js';
import type { ReferenceServerConfig } from '../labConfig.js';
import { freePort } from './dataServices.js';
import { startReference, type ReferenceServer } from './reference.js';
import { signalAll } from './supervisor.js';

const HOST = '127.0.0.1';

/**
 * A reference server playing the api in the local lab (lab.api.server, issue 34 point 4).
 * Its ports are chosen once and kept, so a restart after a kill or a stop answers where the
 * load goes. A process trigger on `api` acts on the server's whole process group (the
 * guards, the master, its workers; nginx too for php-fpm and gunicorn), as `docker pause` freezes a
 * container's cgroup.
 */
export class ReferenceApi {
  private server: ReferenceServer | undefined;
  private port = 0;
  private metricsPort = 0;

  constructor(
    private readonly cfg: ReferenceServerConfig,
    private readonly pool: { readonly workers: number; readonly workMs: number },
    private readonly log: (text: string) => void,
  ) {}

  /** Starts it on `port` (0: a free one) the first time, on the same ports after. */
  async start(port: number): Promise<number> {
    if (this.server) return this.port;
    if (this.port === 0) {
      this.port = port || (await freePort(HOST));
      this.metricsPort = await freePort(HOST);
    }
    this.server = await startReference({
      kind: this.cfg.kind,
      workers: this.pool.workers,
      workMs: this.pool.workMs,
      port: this.port,
      metricsPort: this.metricsPort,
      ...(this.cfg.jvm ? { jvm: this.cfg.jvm } : {}),
      log: (text) => this.log(text),
    });
    return this.port;
  }

  get running(): boolean {
    return this.server !== undefined;
  }

  /** The first guard's pid: a root of the server's process trees (php-fpm and gunicorn have two: the pool's and nginx's). */
  get rootPid(): number | undefined {
    return this.server?.pids[0];
  }

  /** Every process of the server now (the guard first). */
  tree(): number[] {
    if (!this.server) throw new BenchError('E_LAB', 'component "api" is not running in this lab');
    return this.tree0(this.server);
  }

  /** SIGKILL to every process of it at once (its queue and in-flight work lost), then its files removed. */
  async kill(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    signalAll(this.tree0(s), 'SIGKILL');
    await s.stop();
  }

  /** SIGTERM through its guard, SIGKILL to whatever is left after the grace. */
  async stop(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    await s?.stop();
  }

  scrapeText(timeoutMs: number): Promise<string> {
    if (!this.server) throw new BenchError('E_LAB', 'component "api" is not running in this lab');
    return this.server.scrapeText(timeoutMs);
  }

  /** Every guard's tree (processTree includes its root). */
  private tree0(s: ReferenceServer): number[] {
    return s.pids.flatMap((pid) => processTree(pid));
  }
}
