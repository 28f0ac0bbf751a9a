import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type Docker from 'dockerode';
import { BenchError } from '../../../foundation/errors.js';
import type { Lab, LabProcess, LabTopology, UndoRecipe } from '../Lab.js';
import { LinkClient } from '../links.js';
import { scrapeEndpoint } from '../scrapeApi.js';
import { runCompose } from './compose.js';
import {
  composeDownRecipe,
  composeSystemOverride,
  LINK_PORT_BASE,
  PROXY_API_PORT,
  PROXY_SERVICE,
  proxyImage,
  readComposeServices,
  type ComposeSystemConfig,
} from './composeSystem.js';
import {
  dockerClient,
  engineAddress,
  inspectContainer,
  pingEngine,
  projectContainers,
  waitHealthy,
  type EngineAddress,
  type ServiceContainer,
} from './engine.js';
import { checkPorts, ownPorts, publishedPorts } from './ports.js';
import type { DockerUndo } from './undo.js';
import { within } from '../../../foundation/within.js';

export interface ComposeSystemLabConfig extends ComposeSystemConfig {
  /** An env file passed to compose (--env-file), and read for the fault proxy's image. */
  readonly envFile?: string | undefined;
  /** Where the lab's own notes go (the run's lab.log). */
  readonly logFile?: string;
  /** How long the entry may take to answer its health URL after compose up (default 90 s). */
  readonly healthTimeoutMs?: number;
  /** system.metrics.url: an endpoint your file publishes itself (else `metrics`, the one metabench publishes). */
  readonly metricsUrl?: string | undefined;
  /** Called before the project comes up, so the run journals teardownRecipe() (compose-down) first. */
  readonly onProcessesChanged?: (() => void) | undefined;
}

/**
 * The user's own compose file as the system under test (composeSystem.ts writes its override).
 * `up` checks the ports the file publishes, brings the project up, puts one proxy per link on the
 * fault proxy and waits until the entry answers its health URL; process triggers act on any
 * service the file names through the Engine API (as DockerLab does: pause is `docker pause`, kill
 * SIGKILL), each with its journal recipe; link toxics go to the proxy's Toxiproxy API. `down`
 * undoes what the run did and removes the project: every container, network and volume.
 */
export class ComposeSystemLab implements Lab {
  readonly runtime = 'docker' as const;
  private readonly docker: Docker;
  private readonly engine: EngineAddress;
  private readonly containers = new Map<string, ServiceContainer>();
  private readonly paused = new Set<string>();
  private readonly halted = new Set<string>();
  private overrideDir: string | undefined;
  faultProxyApi: string | undefined;

  constructor(private readonly cfg: ComposeSystemLabConfig) {
    this.engine = engineAddress();
    this.docker = dockerClient(this.engine);
  }

  /** The compose options: the user's file, then the generated override (once written). */
  private compose(): { project: string; file: string; envFile?: string; overrides?: string[] } {
    return {
      project: this.cfg.project,
      file: resolve(this.cfg.file),
      ...(this.cfg.envFile ? { envFile: this.cfg.envFile } : {}),
      ...(this.overrideDir ? { overrides: [join(this.overrideDir, 'system-override.json')] } : {}),
    };
  }

  private note(line: string): void {
    if (this.cfg.logFile) appendFileSync(this.cfg.logFile, `[docker system] ${line}\n`);
  }

  get apiUrl(): string {
    return `http://${this.published(this.cfg.entry.service, `${this.cfg.entry.port}/tcp`)}`;
  }

  get apiUrls(): readonly string[] {
    return [this.apiUrl];
  }

  async up(): Promise<void> {
    await pingEngine(this.docker);
    const file = readComposeServices(resolve(this.cfg.file));
    const override = composeSystemOverride(this.cfg, file, proxyImage(process.env, this.cfg.envFile));
    // The ports the user's file publishes itself must be free (the override's are picked by the engine).
    await checkPorts(
      publishedPorts(Object.keys(file.services), process.env, resolve(this.cfg.file)),
      ownPorts(await projectContainers(this.docker, this.cfg.project)),
    );
    // Kept until down: compose reads the override again on every command (down included).
    this.overrideDir = mkdtempSync(join(tmpdir(), 'metabench-system-'));
    writeFileSync(join(this.overrideDir, 'system-override.json'), `${JSON.stringify(override, null, 2)}\n`);
    // Journaled before it is applied, as a fault is: a SIGKILL from here on leaves the project for `lab reset`.
    this.cfg.onProcessesChanged?.();
    this.note(`compose up ${this.cfg.file} as project ${this.cfg.project} (override ${this.overrideDir})`);
    await runCompose(this.compose(), ['up', '-d', '--force-recreate', '--remove-orphans']);
    await this.refresh();
    for (const [service, c] of [...this.containers])
      this.containers.set(service, await waitHealthy(this.docker, c.id));
    this.faultProxyApi = `http://${this.published(PROXY_SERVICE, `${PROXY_API_PORT}/tcp`)}`;
    // The proxy's container runs before its API listens (no healthcheck): a Toxiproxy client call
    // in between can wait forever on a connection the engine's port forwarder accepted.
    await this.waitHttp(`${this.faultProxyApi}/version`, 'the fault proxy');
    const links = new LinkClient(this.faultProxyApi);
    await links.reset();
    for (const [i, l] of this.cfg.links.entries())
      await links.ensureLink({
        name: l.name,
        listen: `0.0.0.0:${LINK_PORT_BASE + i}`,
        upstream: `${l.service}:${l.port}`,
      });
    await this.waitHttp(`${this.apiUrl}${this.cfg.entry.health ?? '/'}`, this.cfg.entry.service);
  }

  /** Waits until a GET of `url` answers 2xx; throws E_LAB_PREFLIGHT with the last answer. */
  private async waitHttp(url: string, who: string): Promise<void> {
    const until = performance.now() + (this.cfg.healthTimeoutMs ?? 90_000);
    let last = 'no answer';
    while (performance.now() < until) {
      try {
        const r = await within(2000, async (signal) => {
          const res = await fetch(url, { signal });
          await res.arrayBuffer();
          return res;
        });
        if (r.ok) return;
        last = `HTTP ${r.status}`;
      } catch (err) {
        last = (err as Error).message;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `${who} does not answer ${url} with 2xx (${last})`,
      `see \`docker logs\` of compose project ${this.cfg.project}'s containers`,
    );
  }

  private async refresh(): Promise<void> {
    this.containers.clear();
    for (const c of await projectContainers(this.docker, this.cfg.project)) this.containers.set(c.service, c);
  }

  private published(service: string, port: string): string {
    const addr = this.containers.get(service)?.ports[port];
    if (!addr)
      throw new BenchError(
        'E_LAB',
        `${service} of compose project "${this.cfg.project}" publishes no ${port}`,
      );
    return addr;
  }

  /** The container of a service of the file; E_LAB naming the services it has otherwise. */
  private container(service: string): ServiceContainer {
    const c = this.containers.get(service);
    if (!c)
      throw new BenchError(
        'E_LAB',
        `no service "${service}" runs in compose project "${this.cfg.project}" (it runs ${[...this.containers.keys()].join(', ')})`,
      );
    return c;
  }

  async pause(service: string): Promise<void> {
    await this.docker.getContainer(this.container(service).id).pause();
    this.paused.add(service);
    this.note(`paused ${service}`);
  }

  async resume(service: string): Promise<void> {
    if (!this.paused.has(service)) return;
    this.paused.delete(service);
    const c = await inspectContainer(this.docker, this.container(service).id);
    if (c.state === 'paused') await this.docker.getContainer(c.id).unpause();
    this.note(`resumed ${service}`);
  }

  async kill(service: string): Promise<void> {
    this.paused.delete(service);
    this.halted.add(service);
    await this.docker.getContainer(this.container(service).id).kill({ signal: 'SIGKILL' });
    this.note(`killed ${service}`);
  }

  async stop(service: string): Promise<void> {
    this.paused.delete(service);
    this.halted.add(service);
    await this.docker.getContainer(this.container(service).id).stop({ t: 10 });
    this.note(`stopped ${service}`);
  }

  async start(service: string): Promise<void> {
    const id = this.container(service).id;
    const c = await inspectContainer(this.docker, id);
    if (c.state !== 'running' && c.state !== 'paused') await this.docker.getContainer(id).start();
    this.containers.set(service, await waitHealthy(this.docker, id));
    this.halted.delete(service);
    this.note(`started ${service}`);
  }

  pauseUndoRecipe(service: string): UndoRecipe {
    return this.recipe(service, 'unpause', `resume ${service}`);
  }

  startUndoRecipe(service: string): UndoRecipe {
    return this.recipe(service, 'start', `start ${service} again`);
  }

  private recipe(service: string, action: DockerUndo['action'], what: string): DockerUndo {
    const c = this.container(service);
    return {
      kind: 'docker',
      action,
      container: c.id,
      engine: this.engine,
      what: `${what} (docker ${action} ${c.name})`,
    };
  }

  /**
   * After a crash (metabench killed, even by SIGKILL) the journal takes the project down through
   * the Engine API, as down() does, and removes the override's directory; none before up().
   */
  teardownRecipe(): UndoRecipe {
    if (!this.overrideDir) return { kind: 'none', what: `compose project ${this.cfg.project} (not up)` };
    return composeDownRecipe(this.cfg.project, this.engine, this.overrideDir);
  }

  /** Undoes the run's process faults, then removes every container, network and volume of the project. */
  async down(): Promise<void> {
    for (const s of [...this.paused]) await this.resume(s).catch(() => undefined);
    this.halted.clear();
    try {
      await runCompose(this.compose(), ['down', '-v', '--remove-orphans', '--timeout', '10']);
      this.note(`compose down -v: project ${this.cfg.project} removed`);
    } catch (err) {
      this.note(`compose down failed: ${(err as Error).message}`);
    } finally {
      if (this.overrideDir) rmSync(this.overrideDir, { recursive: true, force: true });
      this.overrideDir = undefined;
      this.containers.clear();
    }
  }

  flushCache(): Promise<void> {
    return Promise.reject(new BenchError('E_LAB', 'your own system has no cache metabench can flush'));
  }

  /** The system's Prometheus text (system.metrics), whatever the target: it has one endpoint. */
  async scrapeText(_service: string, timeoutMs: number): Promise<string> {
    return scrapeEndpoint(this.metricsUrl(), timeoutMs);
  }

  /** system.metrics' endpoint as the host reaches it: its url, or the port metabench published for it. */
  private metricsUrl(): string {
    if (this.cfg.metricsUrl) return this.cfg.metricsUrl;
    const m = this.cfg.metrics;
    if (!m) throw new BenchError('E_LAB', 'your system declares no metrics endpoint (system.metrics)');
    return `http://${this.published(m.service, `${m.port}/tcp`)}${m.path}`;
  }

  /** Per-process figures need the components' names in LabProcess, which names the built-in lab's only. */
  processes(): readonly LabProcess[] {
    return [];
  }

  topology(): LabTopology {
    return {
      runtime: 'docker',
      components: [],
      // The system's own services are recorded by name in `system` (the run's manifest), not as lab components.
    };
  }

  /** Each service's container, for the manifest and for tests. */
  services(): ReadonlyMap<string, ServiceContainer> {
    return this.containers;
  }
}
