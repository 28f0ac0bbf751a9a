import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import type { DurationDist } from '../../../bench/distributions.js';
import { formatDurationDist } from '../../../services/api/config.js';
import { BenchError } from '../../errors.js';
import type { Component, Lab, LabTopology, UndoRecipe } from '../Lab.js';
import { processStartTicks } from './procStat.js';

export interface LocalLabConfig {
  readonly host: string;
  /** 0 lets the api pick a free port. */
  readonly apiPort: number;
  readonly workers: number;
  readonly work: DurationDist;
  readonly costs?: Readonly<Record<string, DurationDist>>;
  readonly seed: number;
  /** Where the components' stdout/stderr go (a file in the run folder); undefined discards them. */
  readonly logFile?: string;
}

const API_MAIN = fileURLToPath(new URL('../../../services/api/main.js', import.meta.url));
const START_TIMEOUT_MS = 15_000;

/**
 * The lab as child processes on loopback. Pause is SIGSTOP / SIGCONT: the process
 * keeps its sockets and the kernel keeps accepting connections into its backlog, the
 * same semantics as `docker pause` (a frozen cgroup).
 */
export class LocalLab implements Lab {
  readonly runtime = 'local' as const;
  private api: ChildProcess | undefined;
  private apiPort = 0;
  private paused = false;
  private log: WriteStream | undefined;

  constructor(private readonly cfg: LocalLabConfig) {}

  get apiUrl(): string {
    return `http://${this.cfg.host}:${this.apiPort}`;
  }

  async up(): Promise<void> {
    if (this.api) return;
    if (this.cfg.logFile) this.log = createWriteStream(this.cfg.logFile, { flags: 'a' });
    const args = [
      API_MAIN,
      '--host',
      this.cfg.host,
      '--port',
      String(this.cfg.apiPort),
      '--workers',
      String(this.cfg.workers),
      '--work',
      formatDurationDist(this.cfg.work),
      '--seed',
      String(this.cfg.seed),
      ...Object.entries(this.cfg.costs ?? {}).flatMap(([name, d]) => [
        '--cost',
        `${name}=${formatDurationDist(d)}`,
      ]),
      '--exit-with-parent',
    ];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    this.api = child;
    child.stderr?.on('data', (d: Buffer) => this.log?.write(`[api] ${d}`));
    const port = await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new BenchError('E_LAB_PREFLIGHT', `the api did not start within ${START_TIMEOUT_MS / 1000} s`),
          ),
        START_TIMEOUT_MS,
      );
      const lines = createInterface({ input: child.stdout! });
      lines.on('line', (line) => {
        this.log?.write(`[api] ${line}\n`);
        try {
          const msg = JSON.parse(line) as { event?: string; port?: number };
          if (msg.event === 'listening' && typeof msg.port === 'number') {
            clearTimeout(timer);
            resolve(msg.port);
          }
        } catch {
          /* not a status line */
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new BenchError(
            'E_LAB_PREFLIGHT',
            `the api exited while starting (code ${code}, signal ${signal}); see the lab log`,
          ),
        );
      });
      child.once('error', (err) => {
        clearTimeout(timer);
        reject(new BenchError('E_LAB_PREFLIGHT', `cannot start the api: ${err.message}`));
      });
    });
    this.apiPort = port;
    const res = await request(`${this.apiUrl}/health`, { headersTimeout: 5000, bodyTimeout: 5000 });
    await res.body.dump();
    if (res.statusCode !== 200)
      throw new BenchError('E_LAB_PREFLIGHT', `the api's health check answered ${res.statusCode}`);
  }

  async down(): Promise<void> {
    const child = this.api;
    this.api = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        if (this.paused) child.kill('SIGCONT');
        child.kill('SIGTERM');
      } catch {
        /* already gone */
      }
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }
    this.paused = false;
    await new Promise<void>((resolve) => (this.log ? this.log.end(() => resolve()) : resolve()));
    this.log = undefined;
  }

  private child(c: Component): ChildProcess {
    if (c !== 'api' || !this.api?.pid) throw new BenchError('E_LAB', `component "${c}" is not running`);
    return this.api;
  }

  async pause(c: Component): Promise<void> {
    this.child(c).kill('SIGSTOP');
    this.paused = true;
  }

  async resume(c: Component): Promise<void> {
    const child = this.api;
    if (c === 'api' && child?.pid && child.exitCode === null) child.kill('SIGCONT');
    this.paused = false;
  }

  pauseUndoRecipe(c: Component): UndoRecipe {
    const pid = this.child(c).pid!;
    return {
      kind: 'signal',
      pid,
      startTicks: processStartTicks(pid),
      signal: 'SIGCONT',
      what: `resume ${c} (pid ${pid})`,
    };
  }

  async scrapeText(c: Component, timeoutMs: number): Promise<string> {
    if (c !== 'api') throw new BenchError('E_LAB', `component "${c}" has no metrics`);
    const res = await request(`${this.apiUrl}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.body.text();
  }

  topology(): LabTopology {
    return {
      runtime: 'local',
      components: [
        {
          name: 'api',
          url: this.apiUrl,
          pid: this.api?.pid ?? null,
          config: {
            ...(this.cfg.costs
              ? {
                  costs: Object.fromEntries(
                    Object.entries(this.cfg.costs).map(([k, d]) => [k, formatDurationDist(d)]),
                  ),
                }
              : {}),
            workers: this.cfg.workers,
            work: formatDurationDist(this.cfg.work),
            queue: 'fifo',
            seed: this.cfg.seed,
          },
        },
      ],
    };
  }
}
