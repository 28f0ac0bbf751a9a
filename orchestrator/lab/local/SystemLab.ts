import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../../../foundation/errors.js';
import { linkName, systemUrl, type SystemSection } from '../../spec/sections/system.js';
import type { Lab, LabProcess, LabTopology, Target, UndoRecipe } from '../Lab.js';
import { LinkClient } from '../links.js';
import { scrapeEndpoint } from '../scrapeApi.js';
import { processStartTicks } from '../proc/procStat.js';
import { processTree } from '../proc/procUsage.js';
import { FAULTPROXY_MAIN } from './recipes.js';
import { pollReady } from './ready.js';
import { httpGet } from './referenceProcess.js';
import { PausedTrees, resumeRecipe, signalAll, startNodeService } from './supervisor.js';

/** orchestrator/lab/local/systemGuard.sh in the repository (this file runs from dist/orchestrator/lab/local/). */
const GUARD = fileURLToPath(new URL('../../../../orchestrator/lab/local/systemGuard.sh', import.meta.url));
const HOST = '127.0.0.1';

type Spec = NonNullable<SystemSection['processes']>[number];

/** One component of the system as it runs: its guard, and the process group of its command. */
interface Running {
  readonly spec: Spec;
  guard: ChildProcess | undefined;
  group: number | undefined;
  tail: string[];
}

export interface SystemLabOptions {
  readonly seed: number;
  readonly logFile?: string | undefined;
  readonly onProcessesChanged?: (() => void) | undefined;
}

/**
 * Your own system (system:) on the local runtime. Given by its `url`, it is already
 * running: the lab waits for its health and reads its metrics, and acts on it only through
 * the load and the user's commands (validation refuses the other triggers). Given by its
 * `processes`, metabench starts each component (dependencies first) by `sh -c` under a
 * guard (systemGuard.sh) that puts it in a process group of its own and stops the group
 * when metabench goes away, even by SIGKILL; each declared link goes through metabench's
 * fault proxy, whose address the dependent finds in the link's environment variable. Pause
 * is SIGSTOP / SIGCONT of the component's process tree (as `docker pause`), kill SIGKILL
 * and stop SIGTERM to its group; start runs its command again on the same port.
 */
export class SystemLab implements Lab {
  readonly runtime = 'local' as const;
  readonly apiUrl: string;
  readonly apiUrls: readonly string[];
  faultProxyApi: string | undefined;
  private faultProxy: ChildProcess | undefined;
  private readonly running = new Map<string, Running>();
  /** Each link's address at the fault proxy (host:port), by link name. */
  private readonly via = new Map<string, string>();
  private readonly paused = new PausedTrees();
  private log: WriteStream | undefined;

  constructor(
    private readonly system: SystemSection,
    private readonly o: SystemLabOptions,
  ) {
    // The transport takes the origin; the path goes on each request (realRuntime).
    this.apiUrl = new URL(systemUrl(system)).origin;
    this.apiUrls = [this.apiUrl];
    for (const p of system.processes ?? [])
      this.running.set(p.name, { spec: p, guard: undefined, group: undefined, tail: [] });
  }

  private readonly write = (text: string): void => void this.log?.write(text);

  async up(): Promise<void> {
    if (this.system.url !== undefined) {
      await waitFor(
        'your system',
        this.system.health ?? this.system.url,
        () => undefined,
        'start it first: a system given by its url (system.url) is one already running',
      );
      return;
    }
    if ([...this.running.values()].some((r) => r.guard)) return;
    if (this.o.logFile) this.log = createWriteStream(this.o.logFile, { flags: 'a' });
    if ((this.system.links ?? []).length > 0) await this.startLinks();
    for (const name of startOrder(this.system)) await this.startComponent(name);
  }

  /** The fault proxy, with one proxy per declared link to the dependency's own port. */
  private async startLinks(): Promise<void> {
    const port = await startNodeService(
      [FAULTPROXY_MAIN, '-host', HOST, '-port', '0', '-seed', String(this.o.seed), '-exit-with-parent'],
      {
        tag: 'faultproxy',
        what: 'the fault proxy',
        log: this.write,
        cpus: undefined,
        spawned: (child) => {
          this.faultProxy = child;
          this.o.onProcessesChanged?.();
        },
      },
    );
    this.faultProxyApi = `http://${HOST}:${port}`;
    const links = new LinkClient(this.faultProxyApi);
    for (const l of this.system.links ?? []) {
      const to = this.component(l.to).spec;
      const state = await links.ensureLink({
        name: linkName(l),
        listen: `${HOST}:0`,
        upstream: `${HOST}:${to.port}`,
      });
      this.via.set(linkName(l), state.listen);
    }
  }

  /** The environment a component starts with: its own, and each of its links' proxy address. */
  private envOf(spec: Spec): NodeJS.ProcessEnv {
    const links = (this.system.links ?? []).filter((l) => l.from === spec.name);
    return {
      ...process.env,
      ...spec.env,
      ...Object.fromEntries(links.map((l) => [l.env, this.via.get(linkName(l))!])),
    };
  }

  private component(name: string): Running {
    const r = this.running.get(name);
    if (!r) throw new BenchError('E_LAB', `your system has no component "${name}"`);
    return r;
  }

  /** Starts one component under its guard and waits until its health path answers 2xx. */
  private async startComponent(name: string): Promise<void> {
    const r = this.component(name);
    const { spec } = r;
    r.tail = [];
    const guard = spawn('sh', [GUARD, spec.command], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: this.envOf(spec),
      cwd: resolve(spec.cwd ?? '.'),
    });
    guard.once('error', () => undefined);
    guard.stdin?.on('error', () => undefined);
    r.guard = guard;
    r.group = undefined;
    const line = (text: string): void => {
      const m = /^metabench-group (\d+)$/.exec(text);
      if (m && r.group === undefined) {
        r.group = Number(m[1]);
        this.o.onProcessesChanged?.();
        return;
      }
      this.write(`[${name}] ${text}\n`);
      r.tail.push(text);
      if (r.tail.length > 12) r.tail.shift();
    };
    createInterface({ input: guard.stdout! }).on('line', line);
    createInterface({ input: guard.stderr! }).on('line', line);
    this.o.onProcessesChanged?.();
    await waitFor(
      name,
      `http://${HOST}:${spec.port}${spec.health}`,
      () => {
        if (guard.exitCode !== null || guard.signalCode !== null)
          throw new BenchError(
            'E_LAB_PREFLIGHT',
            `${name} (\`${spec.command}\`) exited while starting (code ${guard.exitCode}); its last output:\n${r.tail.join('\n') || '(none)'}`,
          );
      },
      `check system.processes (${name}): its command, its port ${spec.port} and its health path ${spec.health}`,
    );
  }

  /** The process group of a running component's command (its guard names it first thing). */
  private groupOf(t: Target): number {
    const r = this.component(t);
    if (r.group === undefined || !r.guard || r.guard.exitCode !== null)
      throw new BenchError('E_LAB', `${t} is not running`);
    return r.group;
  }

  async pause(t: Target): Promise<void> {
    const g = this.groupOf(t);
    this.paused.pause(t, g, () => processTree(g));
  }

  async resume(t: Target): Promise<void> {
    this.paused.resume(t);
  }

  pauseUndoRecipe(t: Target): UndoRecipe {
    const g = this.groupOf(t);
    return resumeRecipe(t, processTree(g));
  }

  /** SIGKILL (or SIGTERM) to the component's group; resolves once its guard has gone. */
  private async signalGroup(t: Target, signal: NodeJS.Signals): Promise<void> {
    const r = this.component(t);
    const g = this.groupOf(t);
    const guard = r.guard!;
    const gone = once(guard, 'exit');
    this.paused.forget(t);
    try {
      process.kill(-g, 'SIGCONT');
      process.kill(-g, signal);
    } catch {
      /* already gone */
    }
    const timer = setTimeout(() => signalAll([-g], 'SIGKILL'), 5000);
    await gone;
    clearTimeout(timer);
    r.guard = undefined;
    r.group = undefined;
    this.o.onProcessesChanged?.();
  }

  kill(t: Target): Promise<void> {
    return this.signalGroup(t, 'SIGKILL');
  }

  stop(t: Target): Promise<void> {
    return this.signalGroup(t, 'SIGTERM');
  }

  start(t: Target): Promise<void> {
    return this.startComponent(t);
  }

  /** A killed component dies with the system, which the teardown stops: nothing to start. */
  startUndoRecipe(t: Target): UndoRecipe {
    return { kind: 'none', what: `start ${t} again (your system is stopped instead)` };
  }

  /** SIGCONT then SIGKILL to every process of every component and to the fault proxy. */
  teardownRecipe(): UndoRecipe {
    const procs = this.processes();
    const targets = procs
      .flatMap((p) => processTree(p.pid))
      .map((pid) => ({ pid, startTicks: processStartTicks(pid) }));
    if (targets.length === 0) return { kind: 'none', what: 'your system (nothing metabench started runs)' };
    return {
      kind: 'steps',
      what: `stop your system (${procs.map((p) => p.component).join(', ')})`,
      steps: [
        { kind: 'signals', targets, signal: 'SIGCONT', what: 'continue' },
        { kind: 'signals', targets, signal: 'SIGKILL', what: 'kill' },
      ],
    };
  }

  async down(): Promise<void> {
    for (const name of startOrder(this.system).reverse()) {
      const r = this.running.get(name)!;
      if (!r.guard || r.guard.exitCode !== null || r.guard.signalCode !== null) continue;
      const guard = r.guard;
      const gone = once(guard, 'exit');
      // The guard stops the group: SIGCONT, SIGTERM, and SIGKILL after 5 s.
      guard.kill('SIGTERM');
      await Promise.race([gone, sleep(8000)]);
      if (r.group !== undefined) signalAll([-r.group], 'SIGKILL');
      r.guard = undefined;
      r.group = undefined;
    }
    if (this.faultProxy && this.faultProxy.exitCode === null) {
      const gone = once(this.faultProxy, 'exit');
      this.faultProxy.kill('SIGTERM');
      await Promise.race([gone, sleep(5000)]);
    }
    this.faultProxy = undefined;
    this.faultProxyApi = undefined;
    this.o.onProcessesChanged?.();
    await new Promise<void>((done) => (this.log ? this.log.end(done) : done()));
    this.log = undefined;
  }

  flushCache(): Promise<void> {
    return Promise.reject(new BenchError('E_LAB', 'your system has no cache metabench knows'));
  }

  /** The system's Prometheus text (system.metrics.url), whatever the target: it has one endpoint. */
  async scrapeText(_t: Target, timeoutMs: number): Promise<string> {
    const m = this.system.metrics;
    if (!m) throw new BenchError('E_LAB', 'your system declares no metrics endpoint (system.metrics)');
    return scrapeEndpoint(m.url!, timeoutMs);
  }

  topology(): LabTopology {
    const s = this.system;
    if (s.url !== undefined)
      return {
        runtime: 'local',
        components: [
          {
            name: 'system',
            url: s.url,
            pid: null,
            config: {
              ...(s.health ? { health: s.health } : {}),
              ...(s.metrics ? { metrics: s.metrics } : {}),
            },
          },
        ],
      };
    return {
      runtime: 'local',
      components: [...this.running.values()].map((r) => ({
        name: r.spec.name,
        url: `http://${HOST}:${r.spec.port}`,
        pid: r.group ?? null,
        config: {
          command: r.spec.command,
          health: r.spec.health,
          ...(r.spec.cwd ? { cwd: r.spec.cwd } : {}),
        },
      })),
      links: (s.links ?? []).map((l) => ({
        from: l.from,
        to: l.to,
        address: this.via.get(linkName(l)) ?? '',
        proxy: {
          name: linkName(l),
          upstream: `${HOST}:${this.component(l.to).spec.port}`,
          api: this.faultProxyApi ?? '',
        },
      })),
    };
  }

  /** The guards and the fault proxy: every process metabench started is in one of their trees. */
  processes(): readonly LabProcess[] {
    const out: LabProcess[] = [];
    for (const r of this.running.values())
      if (r.guard?.pid !== undefined && r.guard.exitCode === null)
        out.push({ component: r.spec.name, pid: r.guard.pid, command: r.spec.command });
    if (this.faultProxy?.pid !== undefined && this.faultProxy.exitCode === null)
      out.push({ component: 'faultproxy', pid: this.faultProxy.pid, command: 'faultproxy' });
    return out;
  }
}

/** The components in the order they start: a dependency before what needs it (the links are acyclic). */
export function startOrder(s: SystemSection): string[] {
  const names = (s.processes ?? []).map((p) => p.name);
  const out: string[] = [];
  const visit = (n: string): void => {
    if (out.includes(n)) return;
    for (const l of s.links ?? []) if (l.from === n) visit(l.to);
    out.push(n);
  };
  names.forEach(visit);
  return out;
}

/** Polls `url` until it answers 2xx; `check` throws to stop early (a process that exited). */
function waitFor(what: string, url: string, check: () => void, hint: string): Promise<void> {
  return pollReady(`${what} (${url}, 2xx)`, () => httpGet(url, 2000), check, hint);
}
