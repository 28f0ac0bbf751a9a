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
import { apiLinkProxy } from '../apiLink.js';
import { TaskWatch } from './taskWatch.js';
import { checkStackPorts } from './portCheck.js';
import {
  CONTROL_SERVICE,
  dependenciesFirst,
  GENERATED_FILES,
  readCompose,
  stackFile,
  type Placement,
} from './stack.js';
import {
  deployFailures,
  describeFailure,
  missingImages,
  nodeEngine,
  orphanContainers,
  taskEndpoints,
  type SwarmNode,
  type SwarmService,
  type SwarmTask,
  type TaskEndpoint,
} from './tasks.js';

export interface SwarmLabConfig extends DockerLabConfig {
  readonly placement?: Placement | undefined;
}

/** Where a halted replica's api link dials: nothing listens on port 1 in the proxy's container, so the dial is refused. */
const REFUSING_UPSTREAM = '127.0.0.1:1';

/** The dependencies behind the fault proxy's links of the same name, and their ports. */
const DATA_PORTS: Readonly<Record<string, number>> = { redis: 6379, postgres: 5432 };

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
  /** Each api replica's address on the stack's network, as its api link dials it (a run through the link). */
  private readonly linkUpstreams = new Map<number, string>();
  /** Redis's and Postgres's addresses on the stack's network once a trigger started them again (swarm's DNS no longer names them). */
  private readonly dataAddresses = new Map<string, string>();

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
    this.dataAddresses.clear();
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
      apiLink: this.swarm.apiLink,
    });
    // The tasks before: those prepareDeploy's new tasks and the deploy's are not.
    let before = await taskIds(this.docker, this.stack);
    const prepared = await prepareDeploy(this.docker, this.stack, doc, this.engine);
    for (const line of [...prepared.actions, ...prepared.checks]) this.note(line);
    this.note(`stack deploy ${this.stack} (generation ${generation}, api flags: ${flagsOf(0)})`);
    // The api's dependencies first, healthy, then the api replicas (stack.ts, dependenciesFirst).
    const first = dependenciesFirst(doc);
    const dependencies = Object.keys(first.services as object);
    for (const s of await ensureSecrets(this.docker, this.stack)) this.note(`created secret ${s}`);
    await deployStack(this.stack, first);
    await this.discover(dependencies, generation, before);
    await this.openControl();
    before = await taskIds(this.docker, this.stack);
    await deployStack(this.stack, doc);
    await this.removeExtraApis();
    await this.discover(
      Object.keys(doc.services as object).filter((s) => !dependencies.includes(s)),
      generation,
      before,
    );
    await this.prepare();
  }

  /**
   * The api link dials each replica at its container's address on the stack's network, not by
   * its service's name: a container a trigger killed and started again runs outside swarm's
   * knowledge (restart policy `none`: its task stays failed), and swarm's DNS no longer names it.
   */
  protected override async prepare(): Promise<void> {
    if (this.swarm.apiLink)
      for (const [i, s] of this.apiServices().entries())
        this.linkUpstreams.set(i, await this.stackAddress(s));
    await super.prepare();
  }

  protected override apiLinkUpstream(i: number): string {
    return this.linkUpstreams.get(i) ?? super.apiLinkUpstream(i);
  }

  /** The service's container's address on the stack's network, with `port` (the api's by default). */
  private async stackAddress(service: string, port = 8080): Promise<string> {
    const network = `${this.stack}_default`;
    const c = await this.dockerOf(service)
      .getContainer(this.containers.get(service)?.id ?? '')
      .inspect();
    const ip = (c.NetworkSettings.Networks as Record<string, { IPAddress?: string }>)[network]?.IPAddress;
    if (!ip) throw new BenchError('E_LAB', `${service}'s container has no address on network ${network}`);
    return `${ip}:${port}`;
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
        // Dialed by name, or at the address a start trigger found (the name is gone then).
        execPipe(
          docker,
          control,
          () => this.dataAddresses.get(service)?.split(':')[0] ?? service,
          port,
          (m) => this.note(`control pipe: ${m}`),
        ),
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
  private async discover(
    wanted: readonly string[],
    generation: string,
    before: ReadonlySet<string>,
    timeoutMs = 300_000,
  ): Promise<void> {
    const until = performance.now() + timeoutMs;
    const self = ((await this.docker.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? '';
    const pending = new Set(wanted);
    while (pending.size > 0) {
      if (performance.now() > until)
        throw new BenchError(
          'E_LAB_PREFLIGHT',
          `stack ${this.stack}: ${[...pending].join(', ')} not running after ${timeoutMs / 1000} s (tasks pending: images being pulled, or no node meets the placement)`,
          `see \`docker stack ps ${this.stack} --no-trunc\``,
        );
      const state = await swarmState(this.docker, this.stack);
      const { services, tasks, nodes } = state;
      const found = taskEndpoints(this.stack, services, tasks, nodes);
      failFast(this.stack, state, before, pending);
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
    await this.repointApiLinks(t, 'halted');
    await this.repointDataLinks(t, 'halted');
  }

  override async stop(t: Target): Promise<void> {
    for (const s of servicesOf(t, this.replicas)) this.acting.set(s, 'halted');
    await super.stop(t);
    await this.repointApiLinks(t, 'halted');
    await this.repointDataLinks(t, 'halted');
  }

  override async start(t: Target): Promise<void> {
    await super.start(t);
    for (const s of servicesOf(t, this.replicas)) this.acting.set(s, 'started');
    await this.repointApiLinks(t, 'started');
    await this.repointDataLinks(t, 'started');
  }

  /**
   * The api's links to Redis and Postgres dial them by name; a container a trigger killed and
   * the engine started again runs outside swarm's knowledge (its task stays failed) and swarm's
   * DNS no longer names it, so without this the api would never reach it again and a crash of
   * the cache would look like a collapse that never ends. Once started, the link (and the
   * control channel's forward) dials the container's address on the stack's network; while it
   * is down, an address that refuses at once, as a dead Redis does on the other runtimes.
   */
  private async repointDataLinks(t: Target, now: 'halted' | 'started'): Promise<void> {
    if (!this.faultProxyApi) return;
    const links = new LinkClient(this.faultProxyApi);
    for (const s of servicesOf(t, this.replicas)) {
      const port = DATA_PORTS[s];
      if (port === undefined) continue;
      if (now === 'started') this.dataAddresses.set(s, await this.stackAddress(s, port));
      else this.dataAddresses.delete(s);
      const upstream = now === 'started' ? this.dataAddresses.get(s)! : REFUSING_UPSTREAM;
      await links.repoint(s, upstream);
      this.note(`the link to ${s} dials ${upstream}${now === 'halted' ? ` (refused: ${s} is down)` : ''}`);
    }
  }

  /**
   * In a run through the api link: points the link of each api replica `t` names at the
   * container's address again once started (the engine may give it another), or, once killed
   * or stopped, at an address that refuses inside the proxy's container. A stopped container's
   * address on the overlay network is a black hole (measured: a connect to it hung past 30 s),
   * where on the local runtime the dial is refused at once and on the docker runtime it fails
   * with the name lookup: the client meets the same reset on every runtime.
   */
  private async repointApiLinks(t: Target, now: 'halted' | 'started'): Promise<void> {
    if (!this.swarm.apiLink || !this.faultProxyApi) return;
    const links = new LinkClient(this.faultProxyApi);
    const named = servicesOf(t, this.replicas);
    for (const [i, s] of this.apiServices().entries()) {
      if (!named.includes(s)) continue;
      if (now === 'started') this.linkUpstreams.set(i, await this.stackAddress(s));
      const upstream = now === 'started' ? this.linkUpstreams.get(i)! : REFUSING_UPSTREAM;
      await links.repoint(apiLinkProxy(i, this.replicas), upstream);
      this.note(
        `the api link to ${s} dials ${upstream}${now === 'halted' ? ' (refused: the replica is down)' : ''}`,
      );
    }
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

/**
 * Throws E_LAB_PREFLIGHT at the first task of the `pending` services the deploy started that
 * failed or was rejected (restart policy `none`: swarm never retries it), naming service,
 * node and the engine's error; a missing image says how to build or load it.
 */
export function failFast(
  stack: string,
  state: Awaited<ReturnType<typeof swarmState>>,
  before: ReadonlySet<string>,
  pending: ReadonlySet<string>,
): void {
  const fresh = state.tasks.filter((t) => !before.has(t.ID));
  const noImage = missingImages(stack, state.services, fresh, pending);
  if (noImage.length > 0)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `stack ${stack}: the engine has no image for ${noImage.join(', ')}`,
      'build the lab images (scripts/build-offline-images.sh) and pass `--env-file docker/offline.env`, or load the images on every node',
    );
  const failed = deployFailures(stack, state, before, pending);
  if (failed.length > 0)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `stack ${stack}: ${failed.map(describeFailure).join('; ')}`,
      `swarm does not retry it (restart policy none); see \`docker stack ps ${stack} --no-trunc\``,
    );
}

/** The ids of the stack's tasks now: a deploy's own tasks are those not among them. */
export async function taskIds(d: Docker, stack: string): Promise<Set<string>> {
  const tasks = (await d.listTasks({ filters: { label: [`${STACK_LABEL}=${stack}`] } })) as SwarmTask[];
  return new Set(tasks.map((t) => t.ID));
}

/**
 * Before a deploy: removes the stack's containers whose task swarm no longer runs (tasks.ts,
 * orphanContainers), checks the ports the stack publishes (portCheck.ts), then gives each
 * service left without a running task a new one unless the deploy does (`docker service
 * update --force`: swarm never replaces a failed task of restart policy `none`, and a
 * redeploy of the same spec does not either). Returns what it did and what it checked, for the log.
 */
export async function prepareDeploy(
  d: Docker,
  stack: string,
  doc: Record<string, unknown>,
  engine: EngineAddress,
): Promise<{ actions: string[]; checks: string[] }> {
  const actions = await removeOrphans(d, stack, engine);
  const state = await swarmState(d, stack);
  // Before any new task starts: a task binding its port while it is checked would be a clash.
  const self = ((await d.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID;
  const checks = await checkStackPorts(stack, doc, state, 'socketPath' in engine ? self : undefined);
  const running = taskEndpoints(stack, state.services, state.tasks, state.nodes);
  const revived: string[] = [];
  for (const s of state.services) {
    const name = s.Spec.Name.slice(stack.length + 1);
    // Api replicas get a new task from the deploy (a new generation); a service the file no longer has, none.
    if (running.has(name) || replicaOfService(name) !== undefined) continue;
    if (!(name in ((doc.services ?? {}) as object))) continue;
    await docker(['service', 'update', '--force', '--detach', s.Spec.Name]);
    revived.push(name);
  }
  if (revived.length > 0) actions.push(`no running task, given a new one: ${revived.join(', ')}`);
  return { actions, checks };
}

/**
 * Removes the stack's containers swarm no longer runs a task for (a trigger's kill or stop,
 * then a start through the engine), on the manager's engine and on each node's that ran a
 * task of the stack and says how to reach it. Returns a line per container removed.
 */
export async function removeOrphans(d: Docker, stack: string, engine: EngineAddress): Promise<string[]> {
  const { tasks, nodes } = await swarmState(d, stack);
  const self = ((await d.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? '';
  const used = new Set(tasks.map((t) => t.NodeID));
  const engines = new Map<string, Docker>([[engineUrl(engine), d]]);
  for (const n of nodes) {
    if (!used.has(n.ID) || n.ID === self) continue;
    try {
      const e = nodeEngine(n, self, engine);
      if (!engines.has(engineUrl(e))) engines.set(engineUrl(e), dockerClient(e));
    } catch {
      // A node without its engine label: its containers are out of reach; its tasks' ports are its own.
    }
  }
  const lines: string[] = [];
  for (const [url, e] of engines) {
    const containers = await e.listContainers({ all: true, filters: { label: [`${STACK_LABEL}=${stack}`] } });
    for (const c of orphanContainers(tasks, containers)) {
      await e.getContainer(c.Id).remove({ force: true });
      lines.push(
        `removed container ${c.Names[0]?.replace(/^\//, '') ?? c.Id} on ${url}: its task is no longer swarm's (a trigger stopped it and the engine started it)`,
      );
    }
  }
  return lines;
}
