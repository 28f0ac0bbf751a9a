import { runtimePlugin } from '../lab/RuntimePlugin.js';
import { Option, type Command } from 'commander';
import { DEFAULT_PROJECT, type ComposeOptions } from '../lab/engine/compose.js';
import type { dockerClient } from '../lab/engine/engine.js';
import type { ObserveOptions } from '../live/observers.js';
import type { RunContext } from '../run/runOnce.js';
import { wholeNumber } from './options.js';
import { RUNTIMES, type Runtime } from '../lab/runtimes.js';

/**
 * live/observers.ts's DEFAULT_METRICS_PORT, said again here: the options of every run would
 * otherwise load the live metrics (prom-client, a thirtieth of a second) that a run without
 * /metrics never uses. runtime.test.ts holds the two equal.
 */
export const DEFAULT_METRICS_PORT = 9464;

export interface RuntimeFlags {
  runtime: Runtime;
  project: string;
  envFile?: string;
  metricsPort?: number;
  metrics: boolean;
  grafanaUrl?: string;
}

/** The options that pick the lab's runtime and who watches the run (run and lab share the first three). */
export function addRuntimeOptions(cmd: Command, watch = true): Command {
  cmd.addOption(
    new Option(
      '--runtime <RUNTIME>',
      'where the lab runs: child processes, the Docker Compose lab, a simulation, or a Docker Swarm stack',
    )
      .choices([...RUNTIMES])
      .default('local'),
  );
  addComposeOptions(cmd);
  if (watch)
    cmd
      .option(
        '--metrics-port <N>',
        `serve the client-side metrics on /metrics while running (docker default: ${DEFAULT_METRICS_PORT})`,
        wholeNumber('--metrics-port', 0, 65535),
      )
      .option('--no-metrics', 'serve no live /metrics')
      .option(
        '--grafana-url <URL>',
        'annotate runs and triggers in this Grafana (docker default: the lab’s Grafana when it runs)',
        process.env.METABENCH_GRAFANA_URL,
      );
  return cmd;
}

/** The Docker runtimes' project (swarm: stack) and image overrides, for commands with their own --runtime. */
export function addComposeOptions(cmd: Command): Command {
  return cmd
    .option(
      '--project <NAME>',
      'docker: the compose project (swarm: the stack)',
      process.env.METABENCH_COMPOSE_PROJECT ?? DEFAULT_PROJECT,
    )
    .option('--env-file <FILE>', 'docker: image and port overrides for compose (docker/offline.env)');
}

export function composeOptions(f: Pick<RuntimeFlags, 'project' | 'envFile'>): ComposeOptions {
  return { project: f.project, envFile: f.envFile };
}

/**
 * The runtime part of a run's context. In the docker runtime the live metrics are on by
 * default and also bound to the Docker bridge's gateway address (what host-gateway
 * resolves to), which containers reach and other machines do not; 127.0.0.1 alone would
 * be unreachable from the Prometheus container on Linux.
 */
export async function runtimeContext(f: RuntimeFlags): Promise<Pick<RunContext, 'docker' | 'observe'>> {
  if (!runtimePlugin(f.runtime).capabilities.compose)
    return {
      observe: {
        ...(f.metrics && f.metricsPort !== undefined ? { metricsPort: f.metricsPort } : {}),
        ...(f.grafanaUrl !== undefined ? { grafanaUrl: f.grafanaUrl } : {}),
      },
    };
  // The Docker runtimes' modules, loaded for them only.
  const { dockerClient, pingEngine } = await import('../lab/engine/engine.js');
  const { deployedClientScrape, parseMetricsAddress } = await import('../lab/swarm/clientScrape.js');
  const docker = dockerClient();
  await pingEngine(docker);
  // Where `lab up` told the stack's Prometheus to scrape, read back from its deployed configuration.
  const scrape =
    f.runtime === 'swarm' && f.metrics ? await deployedClientScrape(docker, f.project) : undefined;
  const observe: ObserveOptions = {
    ...(f.metrics ? { metricsPort: f.metricsPort ?? DEFAULT_METRICS_PORT } : {}),
    metricsHosts: await bridgeGateway(docker),
    ...(scrape ? { metricsScrape: { ...parseMetricsAddress(scrape.address), token: scrape.token } } : {}),
    ...(f.grafanaUrl !== undefined ? { grafanaUrl: f.grafanaUrl } : await labGrafana(docker, f.project)),
  };
  return { docker: composeOptions(f), observe };
}

/**
 * The address host-gateway stands for: the default bridge's gateway (IPAM's, or else the
 * first address of its subnet, which the engine gives docker0: some engines leave the
 * gateway out of IPAM). Binding it may fail (Docker Desktop, where the engine runs in a
 * VM and 127.0.0.1 is what counts); the metrics server then says so and goes on.
 */
async function bridgeGateway(docker: ReturnType<typeof dockerClient>): Promise<string[]> {
  try {
    const net = (await docker.getNetwork('bridge').inspect()) as {
      IPAM?: { Config?: { Gateway?: string; Subnet?: string }[] };
    };
    const cfg = net.IPAM?.Config?.find((c) => c.Gateway || c.Subnet);
    const gw = cfg?.Gateway || (cfg?.Subnet ? firstHost(cfg.Subnet) : undefined);
    return gw ? [gw] : [];
  } catch {
    return [];
  }
}

/** The first host address of an IPv4 subnet ("172.17.0.0/16" → "172.17.0.1"). */
export function firstHost(subnet: string): string | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(subnet);
  if (!m) return undefined;
  const n = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  const bits = Number(m[5]);
  const net = bits === 0 ? 0 : (n & (~0 << (32 - bits))) >>> 0;
  const h = net + 1;
  return [h >>> 24, (h >>> 16) & 255, (h >>> 8) & 255, h & 255].join('.');
}

/** The project's Grafana, when its container runs. */
async function labGrafana(
  docker: ReturnType<typeof dockerClient>,
  project: string,
): Promise<{ grafanaUrl?: string }> {
  const { projectContainers } = await import('../lab/engine/engine.js');
  const g = (await projectContainers(docker, project)).find((c) => c.service === 'grafana');
  const addr = g?.state === 'running' ? g.ports['3000/tcp'] : undefined;
  return addr ? { grafanaUrl: `http://${addr}` } : {};
}
