import type Docker from 'dockerode';
import { BenchError } from '../../foundation/errors.js';
import { COMPOSE_FILE, type ComposeOptions } from '../lab/engine/compose.js';
import { dockerClient, engineAddress, inspectContainer, pingEngine } from '../lab/engine/engine.js';
import { clientScrapeFor } from '../lab/swarm/clientScrape.js';
import { DEFAULT_METRICS_PORT } from '../live/observers.js';
import {
  deployStack,
  docker as dockerCli,
  managerOf,
  STACK_LABEL,
  stackEnv,
  swarmState,
} from '../lab/swarm/SwarmLab.js';
import { dependenciesFirst, readCompose, stackFile } from '../lab/swarm/stack.js';
import { taskEndpoints } from '../lab/swarm/tasks.js';

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
  // The api's dependencies first, healthy, then the api replicas (stack.ts, dependenciesFirst).
  for (const stage of [dependenciesFirst(doc), doc]) {
    const services = Object.keys(stage.services as object);
    process.stderr.write(`metabench: docker stack deploy ${c.project} (${services.join(' ')})\n`);
    await deployStack(c.project, stage);
    const rows = await untilReady(d, c.project, services);
    if (stage === doc) printRows(rows, c.project);
  }
}

/** The stack's status rows once every one of `services` runs a healthy task; E_LAB_PREFLIGHT after 300 s. */
async function untilReady(d: Docker, project: string, services: readonly string[]): Promise<StatusRow[]> {
  const until = performance.now() + 300_000;
  for (;;) {
    const rows = await statusRows(d, project);
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

/** `docker stack rm`, then waits until none of the stack's services, containers, networks or configs is left. */
export async function swarmDown(c: ComposeOptions): Promise<void> {
  const d = dockerClient();
  await pingEngine(d);
  await managerOf(d);
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
    `lab down: stack ${c.project} removed (services, their containers, network, configs, ${volumes.length} volume${volumes.length === 1 ? '' : 's'})\n`,
  );
}

/** What is left of a stack on the manager's engine: its services, containers, networks, configs and volumes. */
export async function stackLeft(d: Docker, stack: string): Promise<string[]> {
  const filters = { label: [`${STACK_LABEL}=${stack}`] };
  const [services, containers, networks, configs, volumes] = await Promise.all([
    d.listServices({ filters }),
    d.listContainers({ all: true, filters }),
    d.listNetworks({ filters }),
    d.listConfigs({ filters }),
    d.listVolumes({ filters }),
  ]);
  return [
    ...services.map((s) => `service ${s.Spec?.Name ?? s.ID}`),
    ...containers.map((c) => `container ${c.Names[0] ?? c.Id}`),
    ...networks.map((n) => `network ${n.Name}`),
    ...configs.map((x) => `config ${x.Spec?.Name ?? x.ID}`),
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

/** Each service's running task: its node, its container's health (on this engine's node), the addresses it publishes. */
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
    rows.push({
      service: name,
      state: ep ? 'running' : 'no running task',
      health,
      node: ep?.hostname ?? '-',
      published: ep ? Object.values(ep.ports).join(' ') || '-' : '-',
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
