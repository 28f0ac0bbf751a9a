import type Docker from 'dockerode';
import { BenchError } from '../../foundation/errors.js';
import { COMPOSE_FILE, type ComposeOptions } from '../lab/engine/compose.js';
import { dockerClient, engineAddress, inspectContainer, pingEngine } from '../lab/engine/engine.js';
import { clientScrapeFor } from '../lab/swarm/clientScrape.js';
import { DEFAULT_METRICS_PORT } from '../live/observers.js';
import {
  deployStack,
  docker as dockerCli,
  failFast,
  managerOf,
  prepareDeploy,
  removeOrphans,
  STACK_LABEL,
  stackEnv,
  swarmState,
  taskIds,
} from '../lab/swarm/SwarmLab.js';
import { ensureSecrets, setPostgresPassword } from '../lab/swarm/credentials.js';
import { execPipe, forward } from '../lab/swarm/forward.js';
import { CONTROL_SERVICE, dependenciesFirst, readCompose, stackFile } from '../lab/swarm/stack.js';
import { nodeEngine, taskEndpoints, type TaskEndpoint } from '../lab/swarm/tasks.js';

/** `metabench lab up|down|status --runtime swarm`: the lab as a Docker Swarm stack (named --project). */

export async function swarmUp(c: ComposeOptions, replicas: number, metricsAddress?: string): Promise<void> {
  const engine = engineAddress();
  const d = dockerClient(engine);
  await pingEngine(d, engine);
  await managerOf(d);
  const clientScrape = await clientScrapeFor(engine, metricsAddress, DEFAULT_METRICS_PORT);
  if (clientScrape)
    process.stderr.write(
      `metabench: the stack's Prometheus scrapes the client metrics at ${clientScrape.address} with a bearer token (a run serves them there)\n`,
    );
  const doc = stackFile(readCompose(c.file ?? COMPOSE_FILE), {
    stack: c.project,
    replicas,
    env: stackEnv(c.envFile),
    observers: true,
    clientScrape,
  });
  // The tasks before: those prepareDeploy's new tasks and the deploy's are not.
  let before = await taskIds(d, c.project);
  // Containers swarm no longer runs, ports taken, services left without a task: before deploying.
  for (const line of (await prepareDeploy(d, c.project, doc, engineAddress())).actions)
    process.stderr.write(`metabench: ${line}\n`);
  for (const s of await ensureSecrets(d, c.project)) process.stderr.write(`metabench: created secret ${s}\n`);
  // The api's dependencies first, healthy, then the api replicas (stack.ts, dependenciesFirst).
  for (const stage of [dependenciesFirst(doc), doc]) {
    const services = Object.keys(stage.services as object);
    process.stderr.write(`metabench: docker stack deploy ${c.project} (${services.join(' ')})\n`);
    if (stage === doc) before = await taskIds(d, c.project);
    await deployStack(c.project, stage);
    const rows = await untilReady(d, c.project, services, before);
    if (stage === doc) printRows(rows, c.project);
    else {
      // Before any api connects: the postgres role's password, from its secret.
      const pg = await serviceTask(d, c.project, 'postgres');
      await setPostgresPassword(pg.docker, pg.container);
    }
  }
}

/** A running service's task and the engine of its node. */
async function serviceTask(
  d: Docker,
  stack: string,
  service: string,
): Promise<{ docker: Docker; container: string; ep: TaskEndpoint }> {
  const { services, tasks, nodes } = await swarmState(d, stack);
  const ep = taskEndpoints(stack, services, tasks, nodes).get(service);
  if (!ep)
    throw new BenchError(
      'E_LAB',
      `stack ${stack} has no running ${service}`,
      'metabench lab up --runtime swarm',
    );
  const self = ((await d.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID ?? '';
  const own = engineAddress();
  const engine = nodeEngine(
    nodes.find((n) => n.ID === ep.node)!,
    self,
    own,
  );
  return { docker: engine === own ? d : dockerClient(engine), container: ep.container, ep };
}

/**
 * `metabench lab forward SERVICE:PORT`: a port-forward to a service of the stack that publishes
 * nothing (Prometheus's 9090, say) on 127.0.0.1, through the control service, until Ctrl-C.
 */
export async function swarmForward(c: ComposeOptions, target: string, localPort: number): Promise<void> {
  const m = /^([\w.-]+):(\d+)$/.exec(target);
  if (!m)
    throw new BenchError(
      'E_USAGE',
      `lab forward: "${target}" is not SERVICE:PORT`,
      'e.g. metabench lab forward prometheus:9090',
    );
  const d = dockerClient();
  await pingEngine(d);
  await managerOf(d);
  const control = await serviceTask(d, c.project, CONTROL_SERVICE);
  const f = await forward(
    execPipe(control.docker, control.container, m[1]!, Number(m[2]), (e) =>
      process.stderr.write(`metabench: ${e}\n`),
    ),
    (e) => process.stderr.write(`metabench: ${e}\n`),
    localPort,
  );
  process.stdout.write(`${target} of stack ${c.project} at http://${f.address} (Ctrl-C ends it)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await f.close();
}

/**
 * The stack's status rows once every one of `services` runs a healthy task; E_LAB_PREFLIGHT at
 * the first task the deploy started (one not in `before`) that failed or was rejected, or
 * after 300 s (tasks pending: images being pulled).
 */
async function untilReady(
  d: Docker,
  project: string,
  services: readonly string[],
  before: ReadonlySet<string>,
): Promise<StatusRow[]> {
  const until = performance.now() + 300_000;
  for (;;) {
    const rows = await statusRows(d, project);
    failFast(project, await swarmState(d, project), before, new Set(services));
    const ready = services.filter((s) => rows.some((r) => r.service === s && r.ready));
    if (ready.length === services.length) return rows;
    if (performance.now() > until)
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `stack ${project}: ${services.filter((s) => !ready.includes(s)).join(', ')} not running and healthy after 300 s`,
        `see \`docker stack ps ${project} --no-trunc\``,
      );
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** `docker stack rm`, then waits until none of the stack's services, containers, networks, configs or secrets is left. */
export async function swarmDown(c: ComposeOptions): Promise<void> {
  const d = dockerClient();
  await pingEngine(d);
  await managerOf(d);
  // A container a trigger stopped and the engine started again is no task of swarm's: stack rm may leave it.
  for (const line of await removeOrphans(d, c.project, engineAddress()))
    process.stderr.write(`metabench: ${line}\n`);
  await dockerCli(['stack', 'rm', c.project]);
  const until = performance.now() + 120_000;
  for (;;) {
    const left = (await stackLeft(d, c.project)).filter((x) => !x.startsWith('volume '));
    if (left.length === 0) break;
    if (performance.now() > until)
      throw new BenchError('E_LAB', `lab down: stack ${c.project} still has ${left.join(', ')} after 120 s`);
    await new Promise((r) => setTimeout(r, 500));
  }
  // docker stack rm leaves the stack's volumes (its data directories: stack.ts); they go once their containers are gone.
  const volumes =
    (await d.listVolumes({ filters: { label: [`${STACK_LABEL}=${c.project}`] } })).Volumes ?? [];
  for (const v of volumes) await d.getVolume(v.Name).remove();
  process.stdout.write(
    `lab down: stack ${c.project} removed (services, their containers, network, configs, secrets, ${volumes.length} volume${volumes.length === 1 ? '' : 's'})\n`,
  );
}

/** What is left of a stack on the manager's engine: its services, containers, networks, configs, secrets and volumes. */
export async function stackLeft(d: Docker, stack: string): Promise<string[]> {
  const filters = { label: [`${STACK_LABEL}=${stack}`] };
  const [services, containers, networks, configs, secrets, volumes] = await Promise.all([
    d.listServices({ filters }),
    d.listContainers({ all: true, filters }),
    d.listNetworks({ filters }),
    d.listConfigs({ filters }),
    d.listSecrets({ filters }) as Promise<{ ID: string; Spec?: { Name?: string } }[]>,
    d.listVolumes({ filters }),
  ]);
  return [
    ...services.map((s) => `service ${s.Spec?.Name ?? s.ID}`),
    ...containers.map((c) => `container ${c.Names[0] ?? c.Id}`),
    ...networks.map((n) => `network ${n.Name}`),
    ...configs.map((x) => `config ${x.Spec?.Name ?? x.ID}`),
    ...secrets.map((x) => `secret ${x.Spec?.Name ?? x.ID}`),
    ...(volumes.Volumes ?? []).map((v) => `volume ${v.Name}`),
  ];
}

export async function swarmStatus(c: ComposeOptions): Promise<void> {
  const d = dockerClient();
  await pingEngine(d);
  await managerOf(d);
  printRows(await statusRows(d, c.project), c.project);
}

interface StatusRow {
  readonly service: string;
  readonly state: string;
  readonly health: string;
  readonly node: string;
  readonly published: string;
  readonly ready: boolean;
}

/**
 * Each service's running task: its node, its container's health (on this engine's node), and
 * the addresses it listens on as its node's engine bound them (host mode: every interface).
 */
async function statusRows(d: Docker, stack: string): Promise<StatusRow[]> {
  const { services, tasks, nodes } = await swarmState(d, stack);
  const found = taskEndpoints(stack, services, tasks, nodes);
  const self = ((await d.info()) as { Swarm?: { NodeID?: string } }).Swarm?.NodeID;
  const rows: StatusRow[] = [];
  for (const s of services) {
    const name = s.Spec.Name.slice(stack.length + 1);
    const ep = found.get(name);
    // The container's health is known to its node's engine: here for this node's tasks.
    const c =
      ep && ep.node === self ? await inspectContainer(d, ep.container).catch(() => undefined) : undefined;
    const health = c ? (c.health ?? '-') : ep ? 'on another node' : '-';
    // Another node's binding is its engine's to say: the published port and that node's name.
    const published = c
      ? c.listening.join(' ')
      : ep
        ? Object.values(ep.ports)
            .map((a) => `${a} (host mode on ${ep.hostname})`)
            .join(' ')
        : '';
    rows.push({
      service: name,
      state: ep ? 'running' : 'no running task',
      health,
      node: ep?.hostname ?? '-',
      published: published || '-',
      ready:
        ep !== undefined &&
        (c === undefined ? ep.node !== self : c.health === undefined || c.health === 'healthy'),
    });
  }
  return rows.sort((a, b) => a.service.localeCompare(b.service));
}

function printRows(rows: readonly StatusRow[], stack: string): void {
  if (rows.length === 0) {
    process.stdout.write(`stack ${stack}: not deployed\n`);
    return;
  }
  const table = rows.map((r) => [r.service, r.state, r.health, r.node, r.published]);
  const head = ['service', 'state', 'health', 'node', 'published'];
  const widths = head.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
  for (const r of [head, ...table])
    process.stdout.write(
      `${r
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}
