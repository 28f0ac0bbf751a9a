import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import { MAX_REPLICAS } from '../lab/target.js';
import { wholeNumber } from './options.js';
import {
  CORE_SERVICES,
  GRAFANA_SERVICES,
  OBSERVE_SERVICES,
  composeCli,
  runCompose,
  type ComposeOptions,
} from '../lab/engine/compose.js';
import {
  dockerClient,
  pingEngine,
  projectContainers,
  waitHealthy,
  type ServiceContainer,
} from '../lab/engine/engine.js';
import { parseEnvFile, serviceImages } from '../lab/engine/images.js';
import { checkPorts, ownPorts, publishedPorts } from '../lab/docker/ports.js';
import { swarmDown, swarmForward, swarmStatus, swarmUp } from './labSwarm.js';
import { parseMetricsAddress } from '../lab/swarm/clientScrape.js';
import { addRuntimeOptions, composeOptions, type RuntimeFlags } from './runtimeOption.js';

type LabFlags = Pick<RuntimeFlags, 'runtime' | 'project' | 'envFile'>;
type UpFlags = LabFlags & { grafana: boolean; llm?: boolean; replicas?: number; metricsAddress?: string };

/** `metabench lab up|down|status --runtime docker`: the Compose lab around `docker compose` (or `docker-compose`). */
export function registerDockerLab(lab: Command): void {
  addRuntimeOptions(
    lab
      .command('up')
      .description(
        'bring the Docker lab up (api, Redis, Postgres, Toxiproxy, Prometheus, Grafana) and wait until healthy',
      )
      .option('--no-grafana', 'leave Grafana and its image renderer out')
      .option('--llm', 'also start the llm-stub (compose profile "llm")')
      .option(
        '--replicas <N>',
        'swarm: api replicas to deploy (services api, api1…; a run deploys its own lab.api.replicas)',
        wholeNumber('--replicas', 1, MAX_REPLICAS),
      )
      .option(
        '--metrics-address <HOST:PORT>',
        'swarm: where Prometheus scrapes the client metrics (an address of this machine its node reaches; with a bearer token). Default: host.docker.internal on a local engine, else the address the engine sees this machine from',
      ),
    false,
  ).action(async (o: UpFlags) => {
    if (o.metricsAddress !== undefined) {
      parseMetricsAddress(o.metricsAddress);
      if (o.runtime !== 'swarm')
        throw new BenchError(
          'E_USAGE',
          `lab up --metrics-address: only the swarm runtime's Prometheus is configured by metabench`,
          'the docker lab’s Prometheus scrapes host.docker.internal:9464 (prometheus/prometheus.yml)',
        );
    }
    if (o.runtime === 'swarm') return swarmUp(composeOptions(o), o.replicas ?? 1, o.metricsAddress);
    if (o.replicas !== undefined)
      throw new BenchError(
        'E_USAGE',
        'lab up --replicas: only the swarm runtime deploys api replicas ahead of a run',
        'a docker run creates the replicas its lab.api.replicas asks for',
      );
    const c = dockerOnly(o, 'up');
    const docker = dockerClient();
    await pingEngine(docker);
    const services: string[] = [...CORE_SERVICES, ...OBSERVE_SERVICES];
    if (o.grafana) {
      const missing = await grafanaMissing(c);
      if (missing) process.stderr.write(`metabench: Grafana left out: ${missing}\n`);
      else services.push(...GRAFANA_SERVICES);
    }
    if (o.llm) services.push('llm-stub');
    // Every published port must be free, unless this project's own containers hold it already.
    await checkPorts(
      publishedPorts(services, composeEnv(c)),
      ownPorts(await projectContainers(docker, c.project)),
    );
    process.stderr.write(`metabench: ${composeCli().bin} up ${services.join(' ')} (project ${c.project})\n`);
    await runCompose(c, [...(o.llm ? ['--profile', 'llm'] : []), 'up', '-d', ...services], {
      inherit: true,
    });
    const started = await projectContainers(docker, c.project);
    for (const service of services) {
      const s = started.find((x) => x.service === service);
      if (!s) throw new BenchError('E_LAB_PREFLIGHT', `${service}: compose created no container for it`);
      await waitHealthy(docker, s.id, 120_000);
    }
    printStatus(await projectContainers(docker, c.project), c.project);
  });

  addRuntimeOptions(
    lab
      .command('down')
      .description('stop and remove the Docker lab’s containers, its network and their anonymous volumes')
      .option('--volumes', 'also remove the named volumes the compose file declares'),
    false,
  ).action(async (o: LabFlags & { volumes?: boolean }) => {
    if (o.runtime === 'swarm') return swarmDown(composeOptions(o));
    const c = dockerOnly(o, 'down');
    const docker = dockerClient();
    await pingEngine(docker);
    // Compose's `down` keeps the anonymous volumes of images that declare a VOLUME (Postgres's,
    // Prometheus's, Redis's data directories) unless told -v, which would take named ones too:
    // note them first, and remove them once their containers are gone.
    const anonymous = await anonymousVolumes(docker, await projectContainers(docker, c.project));
    await runCompose(
      c,
      ['--profile', 'llm', 'down', '--remove-orphans', '--timeout', '5', ...(o.volumes ? ['--volumes'] : [])],
      { inherit: true },
    );
    const failed: string[] = [];
    for (const v of anonymous)
      await docker
        .getVolume(v)
        .remove()
        .catch((err: { statusCode?: number; message: string }) => {
          if (err.statusCode !== 404) failed.push(`${v} (${err.message})`);
        });
    if (failed.length > 0)
      throw new BenchError('E_LAB', `lab down: cannot remove anonymous volumes: ${failed.join(', ')}`);
    process.stdout.write(
      `lab down: compose project ${c.project} removed (containers, network, ${anonymous.length} anonymous volume${anonymous.length === 1 ? '' : 's'}${o.volumes ? ', named volumes' : ''})\n`,
    );
  });

  addRuntimeOptions(
    lab.command('status').description('the Docker lab’s containers: state, health, published ports'),
    false,
  ).action(async (o: LabFlags) => {
    if (o.runtime === 'swarm') return swarmStatus(composeOptions(o));
    const c = dockerOnly(o, 'status');
    const docker = dockerClient();
    await pingEngine(docker);
    printStatus(await projectContainers(docker, c.project), c.project);
  });

  addRuntimeOptions(
    lab
      .command('forward')
      .description(
        'swarm: reach a service of the stack that publishes no port (prometheus:9090) on 127.0.0.1, until Ctrl-C',
      )
      .argument('<service:port>', 'the service and its container port, e.g. prometheus:9090')
      .option('--port <N>', 'the local port (default: any free one)', wholeNumber('--port', 0, 65535)),
    false,
  ).action(async (target: string, o: LabFlags & { port?: number }) => {
    if (o.runtime !== 'swarm')
      throw new BenchError(
        'E_USAGE',
        'lab forward: only the swarm runtime keeps its services unpublished',
        'the docker runtime publishes each service on 127.0.0.1 (metabench lab status --runtime docker)',
      );
    return swarmForward(composeOptions(o), target, o.port ?? 0);
  });
}

function dockerOnly(o: LabFlags, what: string): ComposeOptions {
  if (o.runtime !== 'docker')
    throw new BenchError(
      'E_USAGE',
      `lab ${what}: the local runtime starts its lab for each run, so there is nothing to ${what === 'status' ? 'show' : `bring ${what}`}`,
      `use --runtime docker for the Compose lab, --runtime swarm for the Swarm stack`,
    );
  return composeOptions(o);
}

/** The variables compose interpolates with: the --env-file's, overridden by the environment (as compose does). */
function composeEnv(c: ComposeOptions): Record<string, string | undefined> {
  return { ...(c.envFile ? parseEnvFile(readFileSync(c.envFile, 'utf8')) : {}), ...process.env };
}

/** The anonymous volumes mounted by these containers (not a compose-declared, named volume). */
export async function anonymousVolumes(
  docker: ReturnType<typeof dockerClient>,
  containers: readonly ServiceContainer[],
): Promise<string[]> {
  const out: string[] = [];
  for (const c of containers) {
    const i = await docker.getContainer(c.id).inspect();
    for (const m of i.Mounts ?? []) {
      if (m.Type !== 'volume' || !m.Name) continue;
      const v = await docker
        .getVolume(m.Name)
        .inspect()
        .catch(() => undefined);
      if (v && !v.Labels?.['com.docker.compose.volume']) out.push(m.Name);
    }
  }
  return out;
}

/** Why Grafana's images cannot be had (neither present nor pullable), or undefined when they can. */
async function grafanaMissing(c: ComposeOptions): Promise<string | undefined> {
  const images = serviceImages(composeEnv(c));
  const docker = dockerClient();
  const absent: string[] = [];
  for (const s of GRAFANA_SERVICES) {
    const img = images[s];
    if (
      img &&
      !(await docker
        .getImage(img)
        .inspect()
        .then(
          () => true,
          () => false,
        ))
    )
      absent.push(img);
  }
  if (absent.length === 0) return undefined;
  try {
    await runCompose(c, ['pull', ...GRAFANA_SERVICES], { timeoutMs: 300_000 });
    return undefined;
  } catch (err) {
    return `${absent.join(', ')} cannot be pulled (${(err as Error).message})`;
  }
}

function printStatus(list: Awaited<ReturnType<typeof projectContainers>>, project: string): void {
  if (list.length === 0) {
    process.stdout.write(`compose project ${project}: not up\n`);
    return;
  }
  const rows = list.map((c) => [
    c.service,
    c.state,
    c.health ?? '-',
    // As the engine bound them, not as the compose file asks.
    c.listening.join(' ') || '-',
    c.image,
  ]);
  const head = ['service', 'state', 'health', 'published', 'image'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  for (const r of [head, ...rows])
    process.stdout.write(
      `${r
        .map((v, i) => v.padEnd(widths[i]!))
        .join('  ')
        .trimEnd()}\n`,
    );
}
