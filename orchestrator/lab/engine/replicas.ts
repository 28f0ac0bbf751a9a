import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { BenchError } from '../../../foundation/errors.js';
import type { DockerUndo, EngineAddress } from '../dockerData.js';
import type { UndoRecipe } from '../undoRecipe.js';
import { replicaIndices, targetOf, type Component, type Target } from '../target.js';
import { COMPOSE_FILE } from './compose.js';
import { parseEnvFile } from './images.js';

/**
 * lab.api.replicas in the Docker lab: replica 0 is the compose file's own `api` service
 * (a lab of one api is exactly the compose file), replica i > 0 is a service `api<i>` of a
 * generated override file (`-f docker-compose.yml -f <override>`, which compose v1 and v2
 * both merge): a copy of `api` with its own command (its seed) and its own published port.
 */

/** The compose service of each component (the api's replica 0). */
export const SERVICE: Record<Component, string> = {
  api: 'api',
  redis: 'redis',
  postgres: 'postgres',
  llm: 'llm-stub',
};

/** The compose service of api replica i: `api` for replica 0, `api<i>` for the others. */
export function apiService(i: number): string {
  return i === 0 ? 'api' : `api${i}`;
}

/** The replica index of a compose service that runs an api replica (`api` 0, `api3` 3), else undefined. */
export function replicaOfService(service: string): number | undefined {
  if (service === 'api') return 0;
  const m = /^api([1-9][0-9]*)$/.exec(service);
  return m ? Number(m[1]) : undefined;
}

/**
 * The compose services a target acts on in a lab of `replicas` api replicas: each replica's
 * for `api`, one for `api[i]`, the component's own otherwise. Throws E_LAB for a replica
 * the lab does not run.
 */
export function servicesOf(t: Target, replicas: number): string[] {
  const p = targetOf(t);
  if (p.component !== 'api') return [SERVICE[p.component]];
  try {
    return replicaIndices(p, replicas).map(apiService);
  } catch (err) {
    throw new BenchError('E_LAB', (err as Error).message);
  }
}

/** The port the compose file publishes the api on (METABENCH_API_PORT: the environment over the env file), 8080 by default. */
export function apiPortBase(env: Readonly<Record<string, string | undefined>>, envFile?: string): number {
  const raw =
    env.METABENCH_API_PORT ||
    (envFile ? parseEnvFile(readFileSync(envFile, 'utf8')).METABENCH_API_PORT : undefined) ||
    '8080';
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new BenchError('E_USAGE', `METABENCH_API_PORT=${raw} is not a port`);
  return port;
}

/**
 * Why `replicas` api replicas cannot be published on consecutive ports from `base`
 * (replica i on base + i, as the local lab does); undefined when they can.
 */
export function replicaPortsProblem(replicas: number, base: number): string | undefined {
  const last = base + replicas - 1;
  return last > 65535
    ? `${replicas} api replicas publish ports ${base} to ${last} (METABENCH_API_PORT + replica), past port 65535: set METABENCH_API_PORT to ${65536 - replicas} or lower`
    : undefined;
}

/** What the override needs of the compose file's api service. */
export interface ApiServiceDef {
  readonly command: string;
  readonly [key: string]: unknown;
}

/** The compose file's `api` service, with its merge keys (`<<: *health`) resolved. */
export function readApiService(file = COMPOSE_FILE): ApiServiceDef {
  const doc = parse(readFileSync(file, 'utf8'), { merge: true }) as {
    services?: Record<string, Record<string, unknown>>;
  };
  const api = doc.services?.api;
  if (!api || typeof api.command !== 'string')
    throw new BenchError('E_LAB_PREFLIGHT', `${file}: no api service with a command string`);
  return api as ApiServiceDef;
}

/** The variable of the api's command that carries its flags. */
const FLAGS_VARIABLE = /\$\{METABENCH_API_FLAGS(?:[:-][^}]*)?\}/;

/**
 * The override document (JSON, which compose reads as YAML) that adds replicas 1 to
 * `replicas - 1`: each a copy of `api` without its build section (one image for all) and
 * with `flagsOf(i)` in place of METABENCH_API_FLAGS, published on 127.0.0.1:(base + i).
 * Undefined for one replica: that lab is the compose file alone.
 */
export function replicaOverride(
  api: ApiServiceDef,
  replicas: number,
  base: number,
  flagsOf: (i: number) => string,
): { services: Record<string, Record<string, unknown>> } | undefined {
  if (replicas <= 1) return undefined;
  if (!FLAGS_VARIABLE.test(api.command))
    throw new BenchError('E_LAB_PREFLIGHT', 'the api service’s command has no ${METABENCH_API_FLAGS}');
  const why = replicaPortsProblem(replicas, base);
  if (why) throw new BenchError('E_LAB_PREFLIGHT', why);
  const { build: _build, ports: _ports, container_name: _name, ...rest } = api;
  const services: Record<string, Record<string, unknown>> = {};
  for (let i = 1; i < replicas; i++)
    services[apiService(i)] = {
      ...rest,
      // A function replacement: flags are taken literally ($ patterns mean nothing here).
      command: api.command.replace(FLAGS_VARIABLE, () => flagsOf(i)),
      ports: [`127.0.0.1:${base + i}:8080`],
    };
  return { services };
}

const UNDO_WORDS: Record<DockerUndo['action'], (t: string) => string> = {
  unpause: (t) => `resume ${t}`,
  start: (t) => `start ${t} again`,
  uncap: (t) => `lift the CPU quota on ${t}`,
  'netem-del': (t) => `take netem off ${t}`,
};

/**
 * The fault journal's undo of `action` on what `t` names, runnable without the lab: one
 * Engine API call on its container, or (`api` with several replicas) one step per replica,
 * each naming its exact container (by id; its name in `what`).
 */
export function undoRecipe(
  t: Target,
  action: DockerUndo['action'],
  replicas: number,
  container: (service: string) => { readonly id: string; readonly name: string },
  engine: EngineAddress | ((service: string) => EngineAddress),
): UndoRecipe {
  const one = (target: string, service: string): DockerUndo => {
    const c = container(service);
    return {
      kind: 'docker',
      action,
      container: c.id,
      // Swarm: each container on its own node's engine.
      engine: typeof engine === 'function' ? engine(service) : engine,
      what: `${UNDO_WORDS[action](target)} (docker ${action} ${c.name})`,
    };
  };
  const services = servicesOf(t, replicas);
  if (services.length === 1) return one(t, services[0]!);
  return {
    kind: 'steps',
    what: `${UNDO_WORDS[action](t)} (its ${services.length} replicas)`,
    steps: services.map((s) => one(`api[${replicaOfService(s)}]`, s)),
  };
}
