import Docker from 'dockerode';
import { BenchError } from '../../errors.js';

/**
 * Where the Docker engine answers: a unix socket (the default, or DOCKER_HOST=unix://…) or
 * an HTTP address (DOCKER_HOST=tcp://host:port). Plain data, so a fault-journal recipe can
 * reach the same engine from another process.
 */
export type EngineAddress = { readonly socketPath: string } | { readonly url: string };

export function engineAddress(env: NodeJS.ProcessEnv = process.env): EngineAddress {
  const host = env.DOCKER_HOST;
  if (!host) return { socketPath: '/var/run/docker.sock' };
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) };
  if (host.startsWith('tcp://')) return { url: `http://${host.slice('tcp://'.length)}` };
  throw new BenchError('E_USAGE', `DOCKER_HOST=${host}: only unix:// and tcp:// (no TLS) are supported`);
}

export function dockerClient(addr: EngineAddress = engineAddress()): Docker {
  if ('socketPath' in addr) return new Docker({ socketPath: addr.socketPath });
  const u = new URL(addr.url);
  return new Docker({ host: u.hostname, port: Number(u.port || 2375), protocol: 'http' });
}

/** Resolves when the engine answers; throws E_LAB_PREFLIGHT saying why it does not. */
export async function pingEngine(docker: Docker): Promise<void> {
  try {
    await docker.ping();
  } catch (err) {
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `the Docker engine does not answer (${(err as Error).message})`,
      'start Docker (dockerd), or set DOCKER_HOST',
    );
  }
}

export const PROJECT_LABEL = 'com.docker.compose.project';
export const SERVICE_LABEL = 'com.docker.compose.service';

export interface ServiceContainer {
  readonly id: string;
  readonly name: string;
  readonly service: string;
  /** created | running | paused | restarting | exited | dead */
  readonly state: string;
  /** healthy | unhealthy | starting; undefined without a healthcheck. */
  readonly health: string | undefined;
  readonly pid: number;
  /** Container port ("8080/tcp") → published host address ("127.0.0.1:8080"). */
  readonly ports: Readonly<Record<string, string>>;
  readonly image: string;
}

/** The project's containers (any state), found by their compose labels, one per service. */
export async function projectContainers(docker: Docker, project: string): Promise<ServiceContainer[]> {
  const list = await docker.listContainers({
    all: true,
    filters: { label: [`${PROJECT_LABEL}=${project}`] },
  });
  const out: ServiceContainer[] = [];
  for (const c of list) out.push(await inspectContainer(docker, c.Id));
  return out.sort((a, b) => a.service.localeCompare(b.service));
}

export async function inspectContainer(docker: Docker, id: string): Promise<ServiceContainer> {
  const i = await docker.getContainer(id).inspect();
  const ports: Record<string, string> = {};
  for (const [port, binds] of Object.entries(i.NetworkSettings.Ports ?? {})) {
    const b = binds?.[0];
    if (b) ports[port] = `${b.HostIp || '127.0.0.1'}:${b.HostPort}`;
  }
  return {
    id: i.Id,
    name: i.Name.replace(/^\//, ''),
    service: i.Config.Labels?.[SERVICE_LABEL] ?? '',
    state: i.State.Status,
    health: i.State.Health?.Status,
    pid: i.State.Pid,
    ports,
    image: i.Config.Image,
  };
}

/**
 * Waits until the container runs and, when it has a healthcheck, is healthy; throws
 * E_LAB_PREFLIGHT naming the service when it exits or the timeout passes.
 */
export async function waitHealthy(docker: Docker, id: string, timeoutMs = 90_000): Promise<ServiceContainer> {
  const until = performance.now() + timeoutMs;
  let c = await inspectContainer(docker, id);
  while (performance.now() < until) {
    if (c.state === 'running' && (c.health === undefined || c.health === 'healthy')) return c;
    if (c.state === 'exited' || c.state === 'dead')
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `${c.service} (container ${c.name}) exited while starting; see \`docker logs ${c.name}\``,
      );
    await new Promise((r) => setTimeout(r, 250));
    c = await inspectContainer(docker, id);
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    `${c.service} (container ${c.name}) is ${c.state}${c.health ? ` and ${c.health}` : ''} after ${timeoutMs / 1000} s`,
  );
}
