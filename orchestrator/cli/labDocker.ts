import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { BenchError } from '../errors.js';
import {
  CORE_SERVICES,
  GRAFANA_SERVICES,
  OBSERVE_SERVICES,
  composeCli,
  runCompose,
  type ComposeOptions,
} from '../lab/docker/compose.js';
import { dockerClient, pingEngine, projectContainers, waitHealthy } from '../lab/docker/engine.js';
import { parseEnvFile, serviceImages } from '../lab/docker/images.js';
import { addRuntimeOptions, composeOptions, type RuntimeFlags } from './runtimeOption.js';

type LabFlags = Pick<RuntimeFlags, 'runtime' | 'project' | 'envFile'>;

/** `metabench lab up|down|status --runtime docker`: the Compose lab around `docker compose` (or `docker-compose`). */
export function registerDockerLab(lab: Command): void {
  addRuntimeOptions(
    lab
      .command('up')
      .description(
        'bring the Docker lab up (api, Redis, Postgres, Toxiproxy, Prometheus, Grafana) and wait until healthy',
      )
      .option('--no-grafana', 'leave Grafana and its image renderer out')
      .option('--llm', 'also start the llm-stub (compose profile "llm")'),
    false,
  ).action(async (o: LabFlags & { grafana: boolean; llm?: boolean }) => {
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
    process.stderr.write(`metabench: ${composeCli().bin} up ${services.join(' ')} (project ${c.project})\n`);
    await runCompose(c, [...(o.llm ? ['--profile', 'llm'] : []), 'up', '-d', ...services], { inherit: true });
    for (const s of await projectContainers(docker, c.project))
      if (services.includes(s.service)) await waitHealthy(docker, s.id, 120_000);
    printStatus(await projectContainers(docker, c.project), c.project);
  });

  addRuntimeOptions(
    lab.command('down').description('stop and remove the Docker lab’s containers and network'),
    false,
  ).action(async (o: LabFlags) => {
    const c = dockerOnly(o, 'down');
    await runCompose(c, ['--profile', 'llm', 'down', '--remove-orphans', '--timeout', '5'], {
      inherit: true,
    });
    process.stdout.write(`lab down: compose project ${c.project} removed\n`);
  });

  addRuntimeOptions(
    lab.command('status').description('the Docker lab’s containers: state, health, published ports'),
    false,
  ).action(async (o: LabFlags) => {
    const c = dockerOnly(o, 'status');
    const docker = dockerClient();
    await pingEngine(docker);
    printStatus(await projectContainers(docker, c.project), c.project);
  });
}

function dockerOnly(o: LabFlags, what: string): ComposeOptions {
  if (o.runtime !== 'docker')
    throw new BenchError(
      'E_USAGE',
      `lab ${what}: the local runtime starts its lab for each run, so there is nothing to ${what === 'status' ? 'show' : `bring ${what}`}`,
      `use --runtime docker for the Compose lab`,
    );
  return composeOptions(o);
}

/** Why Grafana's images cannot be had (neither present nor pullable), or undefined when they can. */
async function grafanaMissing(c: ComposeOptions): Promise<string | undefined> {
  const env = { ...(c.envFile ? parseEnvFile(readFileSync(c.envFile, 'utf8')) : {}), ...process.env };
  const images = serviceImages(env);
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
    return `${absent.join(', ')} cannot be pulled (${(err as Error).message.slice(0, 200)})`;
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
    Object.values(c.ports).join(' ') || '-',
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
