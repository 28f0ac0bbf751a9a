import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { parse } from 'yaml';
import { BenchError } from '../../../foundation/errors.js';
import { COMPOSE_FILE } from './compose.js';
import type { ServiceContainer } from './engine.js';
import { interpolate } from './images.js';

/** One port a service of the compose file publishes on the host. */
export interface PublishedPort {
  readonly service: string;
  readonly hostIp: string;
  readonly port: number;
  /** The variable that moves it (METABENCH_API_PORT), when the compose file has one. */
  readonly variable: string | undefined;
}

/**
 * The host ports the given services publish, as compose resolves `ports:` entries of the form
 * "IP:${VAR:-DEFAULT}:CONTAINER" with `env` (the environment over the --env-file's values).
 */
export function publishedPorts(
  services: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  file = COMPOSE_FILE,
): PublishedPort[] {
  const doc = parse(readFileSync(file, 'utf8')) as { services?: Record<string, { ports?: unknown[] }> };
  const out: PublishedPort[] = [];
  for (const service of services)
    for (const p of doc.services?.[service]?.ports ?? []) {
      if (typeof p !== 'string') continue;
      const variable = /\$\{(\w+)/.exec(p)?.[1];
      const parts = interpolate(p, env).split(':');
      if (parts.length < 2) continue; // container port only: compose picks a free host port
      const hostIp = parts.length >= 3 ? parts[0]! : '0.0.0.0';
      const port = Number(parts[parts.length - 2]);
      if (Number.isInteger(port) && port > 0) out.push({ service, hostIp, port, variable });
    }
  return out;
}

/** Whether something already listens on host:port (binding it fails with EADDRINUSE or EACCES). */
export function portTaken(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(undefined)));
  });
}

/**
 * The ports this project's containers hold ("IP:PORT"): those a running one publishes,
 * and those a restarting or paused one is bound to (a container that restart-loops
 * after a failed `lab up` lists none while it is down, yet its port is not free for a
 * moment later). A stopped container holds none.
 */
export function ownPorts(containers: readonly ServiceContainer[]): Set<string> {
  const own = new Set<string>();
  for (const c of containers) {
    for (const p of Object.values(c.ports)) own.add(p);
    if (c.state === 'running' || c.state === 'restarting' || c.state === 'paused')
      for (const b of c.bindings) own.add(b);
  }
  return own;
}

/**
 * Before `compose up`: every published port must be free (or held by this project's own
 * containers, listed in `ownPorts` as "IP:PORT"). Throws E_LAB_PREFLIGHT naming each clash's
 * service, port and the variable that moves it.
 */
export async function checkPorts(
  ports: readonly PublishedPort[],
  ownPorts: ReadonlySet<string>,
): Promise<void> {
  const clashes: string[] = [];
  for (const p of ports) {
    if (ownPorts.has(`${p.hostIp}:${p.port}`)) continue;
    const why = await portTaken(p.hostIp, p.port);
    if (why)
      clashes.push(
        `${p.service} publishes ${p.hostIp}:${p.port}, which is taken (${why})${p.variable ? `: set ${p.variable} to a free port` : ''}`,
      );
  }
  if (clashes.length > 0)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `port clash: ${clashes.join('; ')}`,
      'set the variable in the environment or in the --env-file; `ss -ltnp` shows who holds a port',
    );
}
