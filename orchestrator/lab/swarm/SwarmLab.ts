import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { BenchError } from '../../../foundation/errors.js';
import type { EngineAddress } from '../dockerData.js';
import { replicaSeed } from '../labConfig.js';
import { dockerApiFlags, flagsString } from '../engine/apiFlags.js';
import { COMPOSE_FILE } from '../engine/compose.js';
import { DockerLab, type DockerLabConfig } from '../engine/DockerLab.js';
import {
  dockerClient,
  engineUrl,
  inspectContainer,
  pingEngine,
  waitHealthy,
  type ServiceContainer,
} from '../engine/engine.js';
import { parseEnvFile } from '../engine/images.js';
import { replicaOfService, servicesOf } from '../engine/replicas.js';
import type { Clock } from '../../../foundation/clock.js';
import type { Target } from '../Lab.js';
import { ensureSecrets, readSecret, SECRETS, setPostgresPassword } from './credentials.js';
import { execPipe, forward, type Forward } from './forward.js';
import { ForwardedLinks } from './forwardedLinks.js';
import { LinkClient, type LinkControl } from '../links.js';
import { TaskWatch } from './taskWatch.js';
import {
  CONTROL_SERVICE,
  dependenciesFirst,
  GENERATED_FILES,
  readCompose,
  stackFile,
  type Placement,
} from './stack.js';
import {
  missingImages,
  nodeEngine,
  taskEndpoints,
  type SwarmNode,
  type SwarmService,
  type SwarmTask,
  type TaskEndpoint,
} from './tasks.js';

export interface SwarmLabConfig extends DockerLabConfig {
  readonly placement?: Placement | undefined;
}

/** The label `docker stack deploy` gives a stack's services, networks and configs. */
export const STACK_LABEL = 'com.docker.stack.namespace';

/**
 * The lab as a Docker Swarm stack (stack.ts generates it from docker-compose.yml): `up`
 * deploys it with this experiment's api flags (fresh api tasks for every run), finds where
 * each task runs (tasks.ts) and waits until each container is healthy; from then on it is
 * the docker lab's, acting on each task's container through the engine of the node that
 * runs it, and reaching each service at its node's address and host-mode port.
 */
export class SwarmLab extends DockerLab {
  override readonly runtime = 'swarm' as const;
  private readonly endpoints = new Map<string, TaskEndpoint>();
  private readonly engines = new Map<string, EngineAddress>();
  private readonly clients = new Map<string, Docker>();
  /** The port-forwards to the services that publish nothing, by service (their container port is FORWARDED's). */
  private readonly forwards = new Map<string, Forward>();
  /** Services a trigger of the run killed or stopped (`halted`), or started again since the last poll (`started`). */
  private readonly acting = new Map<string, 'halted' | 'started'>();

  constructor(private readonly swarm: SwarmLabConfig) {
    super(swarm);
  }

  private get stack(): string {
    return this.swarm.compose.project;
  }

  override async up(): Promise<void> {
    await pingEngine(this.docker);
    await managerOf(this.docker);
    const generation = randomBytes(6).toString('hex');
    const env = stackEnv(this.swarm.compose.envFile);
    const flagsOf = (i: number): string =>
      flagsString(dockerApiFlags({ ...this.swarm, seed: replicaSeed(this.swarm.seed, i) }));
    const doc = stackFile(readCompose(this.swarm.compose.file ?? COMPOSE_FILE), {
      stack: this.stack,
      replicas: this.replicas,
      flagsOf,
      env,
      placement: this.swarm.placement,
      // A run deploys the core; Prometheus, when `lab up` deployed it, stays as it is.
      observers: false,
      generation,
    });
    this.note(`stack deploy ${this.stack} (generation ${generation}, api flags: ${flagsOf(0)})`);
    // The api's dependencies first, healthy, then the api replicas (stack.ts, dependenciesFirst).
    const first = dependenciesFirst(doc);
    const dependencies = Object.keys(first.services as object);
    for (const s of await ensureSecrets(this.docker, this.stack)) this.note(`created secret ${s}`);
    await deployStack(this.stack, first);
    await this.discover(dependencies, generation);
    await this.openControl();
    await deployStack(this.stack, doc);
    await this.removeExtraApis();
    await this.discover(
      Object.keys(doc.services as object).filter((s) => !dependencies.includes(s)),
      generation,
    );
    await this.prepare();
  }

  /**
   * The control channel, once the dependencies run: a port-forward to each service that
   * publishes nothing (through the control service: forward.ts), the passwords read from the
   * stack's secrets (memory only), and the postgres role's set from its secret before any api
   * connects.
   */
  private async openControl(): Promise<void> {
    await this.closeForwards();
    const control = this.container(CONTROL_SERVICE).id;
    const docker = this.dockerOf(CONTROL_SERVICE);
    for (const [service, port] of Object.entries(FORWARDED)) {
      const f = await forward(
        execPipe(docker, control, service, port, (m) => this.note(`control pipe: ${m}`)),
        (m) => this.note(m),
      );
      this.forwards.set(service, f);
      this.note(`${service}:${port} forwarded to ${f.address} (through ${CONTROL_SERVICE})`);
    }
    this.credentials = {
      redis: await readSecret(docker, control, SECRETS.redis),
      postgres: await readSecret(docker, control, SECRETS.postgres),
    };
    await setPostgresPassword(this.dockerOf('postgres'), this.container('postgres').id);
  }

  private async closeForwards(): Promise<void> {
    for (const f of this.forwards.values()) await f.close();
    this.forwards.clear();
  }

  override async down(): Promise<void> {
    try {
      await super.down();
    } finally {
      await this.closeForwards();
    }
  }

  /** The fault proxy's links through the forward; their undo recipes through the engine (lab reset after a kill). */
  get linkControl(): LinkControl | undefined {
    const control = this.containers.get(CONTROL_SERVICE);
    if (!this.faultProxyApi || !control) return undefined;
    return new ForwardedLinks(new LinkClient(this.faultProxyApi), {
      host: 'toxiproxy',
      port: FORWARDED.toxiproxy,
      container: control.id,
      engine: this.engineOf(CONTROL_SERVICE),
    });
  }

  /** A service the stack does not publish is at its port-forward's address. */
  protected override published(service: string, port: string): string {
    const f = this.forwards.get(service);
    return f && port === `${FORWARDED[service as keyof typeof FORWARDED]}/tcp`
      ? f.address
      : super.published(service, port);
  }

  /** Removes api services an earlier run with more replicas left (they would serve nobody and take CPU). */
  private async removeExtraApis(): Promise<void> {
    for (const s of await stackServices(this.docker, this.stack)) {
      const i = replicaOfService(s.Spec.Name.slice(this.stack.length + 1));
      if (i === undefined || i < this.replicas) continue;
      await this.docker.getService(s.ID).remove();
      this.note(
        `removed service ${s.Spec.Name} (api replica ${i}, beyond lab.api.replicas ${this.replicas})`,
      );
    }
  }

  /**
   * Waits until each service runs one task (the api's of this generation) whose container is
   * healthy, and records where: its node's engine and the addresses it publishes.
   */
  private async discover(wanted: readonly string[], generation: string, timeoutMs = 300_000): Promise<void> {
    const until = performance.now() + timeoutMs;
    const self = ((await this.docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? '';
    const pending = new Set(wanted);
    let last = '';
    while (pending.size > 0) {
      if (performance.now() > until)
        throw new BenchError(
          'E_LAB_PREFLIGHT',
          `stack ${this.stack}: ${[...pending].join(', ')} not running after ${timeoutMs / 1000} s${last}`,
          `see \`docker stack ps ${this.stack} --no-trunc\``,
        );
      const { services, tasks, nodes } = await swarmState(this.docker, this.stack);
      const found = taskEndpoints(this.stack, services, tasks, nodes);
      last = failedTasks(this.stack, services, tasks);
      const noImage = missingImages(this.stack, services, tasks, pending);
      if (noImage.length > 0)
        throw new BenchError(
          'E_LAB_PREFLIGHT',
          `stack ${this.stack}: the engine has no image for ${noImage.join(', ')}`,
          'build the lab images (scripts/build-offline-images.sh) and pass `--env-file docker/offline.env`, or load the images on every node',
        );
      for (const s of [...pending]) {
        const ep = found.get(s);
        if (!ep) continue;
        const engine = nodeEngine(
          nodes.find((n) => n.ID === ep.node)!,
          self,
          this.engine,
        );
        const docker = this.client(engine);
        const c = await inspectContainer(docker, ep.container).catch(() => undefined);
        if (!c) continue;
        const labels = ((await docker.getContainer(ep.container).inspect()).Config.Labels ?? {}) as Record<
          string,
          string
        >;
        // An api task of an earlier deploy, still running while the update replaces it.
        if (replicaOfService(s) !== undefined && labels['metabench.generation'] !== generation) continue;
        this.endpoints.set(s, ep);
        this.engines.set(s, engine);
        this.containers.set(s, await this.healthy(s, ep.container));
        this.note(`${s}: task ${ep.task} on ${ep.hostname} (${ep.address}), container ${c.name}`);
        pending.delete(s);
      }
      if (pending.size > 0) await new Promise((r) => setTimeout(r, 500));
    }
  }

  override async kill(t: Target): Promise<void> {
    for (const s of servicesOf(t, this.replicas)) this.acting.set(s, 'halted');
    await super.kill(t);
  }

  override async stop(t: Target): Promise<void> {
    for (const s of servicesOf(t, this.replicas)) this.acting.set(s, 'halted');
    await super.stop(t);
  }

  override async start(t: Target): Promise<void> {
    await super.start(t);
    for (const s of servicesOf(t, this.replicas)) this.acting.set(s, 'started');
  }

  /**
   * Polls the stack's tasks every `everyMs` and notes what changed unasked (taskWatch.ts),
   * until stopped. Every 2 s, not faster: each poll is three Engine API calls, and a busy
   * dockerd on a 2-core machine makes the load generator late.
   */
  watchTasks(clock: Clock, note: (event: object) => void, everyMs = 2000): { stop(): Promise<void> } {
    const watch = new TaskWatch(this.stack);
    let polling: Promise<void> = Promise.resolve();
    let stopped = false;
    const poll = async (): Promise<void> => {
      const list = await swarmState(this.docker, this.stack);
      const atMs = Math.round(clock.now());
      for (const c of watch.step(list, atMs, (s) => this.acting.has(s))) {
        note(c);
        this.note(`swarm task ${c.change}: ${c.service} task ${c.task} ${c.state} (desired ${c.desired})`);
      }
      for (const [s, a] of this.acting) if (a === 'started') this.acting.delete(s);
    };
    // One poll at a time, the next everyMs after the previous one ends: a slow engine is not piled on.
    let timer: NodeJS.Timeout | undefined;
    const loop = (): void => {
      polling = poll()
        .catch((err: unknown) => this.note(`swarm task poll failed: ${(err as Error).message}`))
        .then(() => {
          if (!stopped) timer = setTimeout(loop, everyMs);
        });
    };
    loop();
    return {
      stop: async () => {
        stopped = true;
        clearTimeout(timer);
        await polling;
        // A last look: what happened since the previous poll.
        await poll().catch(() => undefined);
      },
    };
  }

  private client(engine: EngineAddress): Docker {
    const key = engineUrl(engine);
    let c = this.clients.get(key);
    if (!c) this.clients.set(key, (c = key === engineUrl(this.engine) ? this.docker : dockerClient(engine)));
    return c;
  }

  protected override engineOf(service: string): EngineAddress {
    return this.engines.get(service) ?? this.engine;
  }

  protected override dockerOf(service: string): Docker {
    return this.client(this.engineOf(service));
  }

  /** The container as the docker lab reads it, under its stack service's name, with the addresses task discovery found. */
  protected override async healthy(service: string, id: string): Promise<ServiceContainer> {
    const c = await waitHealthy(this.dockerOf(service), id, 180_000);
    return { ...c, service, ports: this.endpoints.get(service)?.ports ?? {} };
  }

  /** Each api replica's task: node and container, for the manifest. */
  override topology(): ReturnType<DockerLab['topology']> {
    const t = super.topology();
    const tasks = this.apiServices().map((s) => {
      const ep = this.endpoints.get(s);
      return ep ? { service: s, task: ep.task, node: ep.hostname, address: ep.address } : { service: s };
    });
    return {
      ...t,
      components: t.components.map((c) =>
        c.name === 'api' ? { ...c, config: { ...c.config, stack: this.stack, tasks } } : c,
      ),
    };
  }
}

/** The services the orchestrator reaches through the control channel, and their container port. */
export const FORWARDED = { redis: 6379, postgres: 5432, toxiproxy: 8474 } as const;

/** Throws E_LAB_PREFLIGHT unless the engine is a manager of an active swarm. */
export async function managerOf(docker: Docker): Promise<void> {
  const info = (await docker.info()) as { Swarm?: { LocalNodeState?: string; ControlAvailable?: boolean } };
  if (info.Swarm?.LocalNodeState !== 'active')
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `the Docker engine is not part of a swarm (state: ${info.Swarm?.LocalNodeState ?? 'unknown'})`,
      'docker swarm init --advertise-addr ADDRESS (on one machine: 127.0.0.1), or run on a manager of your swarm',
    );
  if (!info.Swarm.ControlAvailable)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      'the Docker engine is a swarm worker: stacks are deployed from a manager',
      'point DOCKER_HOST or DOCKER_CONTEXT at a manager',
    );
}

/** The environment over the env file's values: what the stack file's ${VARS} resolve with. */
export function stackEnv(envFile: string | undefined): Record<string, string | undefined> {
  return { ...(envFile ? parseEnvFile(readFileSync(envFile, 'utf8')) : {}), ...process.env };
}

/** `docker stack deploy` of the generated file and the files generated with it (written to a temporary folder, removed once read). */
export async function deployStack(stack: string, doc: Record<string, unknown>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-stack-'));
  const file = join(dir, 'stack.json');
  const { [GENERATED_FILES]: generated, ...rest } = doc;
  const files = (generated ?? {}) as Record<string, string>;
  const configs = Object.fromEntries(
    Object.entries((rest.configs ?? {}) as Record<string, { file?: string }>).map(([k, c]) => [
      k,
      c.file !== undefined && c.file in files ? { ...c, file: join(dir, c.file) } : c,
    ]),
  );
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  writeFileSync(file, `${JSON.stringify(rest.configs ? { ...rest, configs } : rest, null, 2)}\n`);
  try {
    // Images are never resolved against a registry: they are the locally built ones (docs/lab.md).
    await docker(['stack', 'deploy', '--resolve-image', 'never', '-c', file, stack]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs the docker CLI against the engine metabench uses; rejects with its error output. */
export function docker(args: readonly string[], timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('docker', args, {
      // The docker CLI finds the engine as engineAddress() does (DOCKER_CONTEXT, DOCKER_HOST, the current context).
      env: process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), timeoutMs);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new BenchError('E_LAB_PREFLIGHT', `cannot run docker: ${e.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else
        reject(
          new BenchError('E_LAB_PREFLIGHT', `docker ${args.join(' ')} failed (exit ${code}): ${err.trim()}`),
        );
    });
  });
}

/** The stack's services. */
export async function stackServices(d: Docker, stack: string): Promise<SwarmService[]> {
  return (await d.listServices({ filters: { label: [`${STACK_LABEL}=${stack}`] } })) as SwarmService[];
}

/** The stack's services, their tasks and the swarm's nodes, as the manager reports them. */
export async function swarmState(
  d: Docker,
  stack: string,
): Promise<{ services: SwarmService[]; tasks: SwarmTask[]; nodes: SwarmNode[] }> {
  const services = await stackServices(d, stack);
  const tasks = (await d.listTasks({
    filters: { label: [`${STACK_LABEL}=${stack}`] },
  })) as SwarmTask[];
  const nodes = (await d.listNodes()) as SwarmNode[];
  return { services, tasks, nodes };
}

/** ": service: error" for each task of the stack that failed (why a service does not come up). */
function failedTasks(stack: string, services: readonly SwarmService[], tasks: readonly SwarmTask[]): string {
  const nameOf = new Map(services.map((s) => [s.ID, s.Spec.Name.slice(stack.length + 1)]));
  const failed = tasks
    .filter((t) => t.Status.State === 'failed' || t.Status.State === 'rejected')
    .map(
      (t) => `${nameOf.get(t.ServiceID) ?? t.ServiceID} ${t.Status.State}: ${t.Status.Err ?? 'no message'}`,
    );
  return failed.length > 0 ? `: ${[...new Set(failed)].join('; ')}` : '';
}
