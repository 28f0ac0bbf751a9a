import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BenchError } from '../../../foundation/errors.js';
import { readCompose as readComposeFile } from '../engine/compose.js';
import { interpolate } from '../engine/images.js';
import { apiService, replicaOfService, replicaPortsProblem } from '../engine/replicas.js';
import { PG_HBA, stackSecrets, withCredentials } from './credentials.js';
import { CONTROL_SCRIPT } from './forward.js';
import { ENGINE_SOCKET, swarmPrometheusConfig, type ClientScrape } from './prometheusConfig.js';
import { API_LINK_PORT_BASE } from '../engine/apiLinkPorts.js';

/**
 * The lab as a Docker Swarm stack (`docker stack deploy -c <file>`), generated from
 * docker-compose.yml so there is one description of the lab. What the generation changes,
 * and why:
 * - options `docker stack deploy` refuses (depends_on as a map, profiles) or ignores with a
 *   warning (build, container_name, restart) are left out;
 * - every service resolves by DNS round robin (`endpoint_mode: dnsrr`): a service's virtual
 *   IP needs the engine's iptables rules, which an engine run with --iptables=false lacks;
 * - only the entry is published: each api replica's port, `mode: host` on the node that runs
 *   the task (dnsrr has no routing mesh), so the generator reaches each replica directly at its
 *   node's address. Redis, Postgres, the fault proxy's API and Prometheus publish nothing: the
 *   orchestrator reaches them through the `control` service (a container of the api image on
 *   the stack's network that runs services/control/pipe.ts, shipped as a config), a port-forward
 *   over the Engine API (forward.ts). Redis and Postgres take a password from a swarm secret
 *   all the same (credentials.ts): the network is attachable;
 * - files the compose file bind-mounts become swarm configs: the engine copies them to
 *   whichever node runs the task, where a bind mount needs the file on that node;
 * - the data directories the images declare as VOLUME get a named volume of the stack
 *   (<stack>_<service>-data, labelled with the stack, so `lab down` finds and removes it):
 *   an anonymous one would be left behind by `docker stack rm`, and a tmpfs is owned by
 *   root, where Postgres and Prometheus run as their own users;
 * - api replica i is a service of its own (`api`, `api1`…, as in the docker lab), with its
 *   own seed and its own published port (METABENCH_API_PORT + i);
 * - `deploy:` gives each service one task, a restart policy of `none` (a trigger's kill or
 *   stop leaves the container down until the trigger starts it, as in the docker lab; swarm
 *   would otherwise replace it with a container the trigger never named) and the placement
 *   constraints of its role (lab.placement), by default the manager;
 * - Prometheus discovers the api tasks from the engine (prometheusConfig.ts): its
 *   configuration is generated for the stack, the node's Docker socket is mounted read-only
 *   and it runs as root (the socket is root's and the docker group's, whose id differs per
 *   node), on a manager (only a manager lists tasks).
 * Variables (${METABENCH_*}) are resolved here from the environment over the env file:
 * `docker stack deploy` reads no --env-file.
 */

/** The services of the stack by placement role (lab.placement's keys). */
export const PLACEMENT_ROLES = ['api', 'redis', 'postgres', 'proxy', 'observers'] as const;
export type PlacementRole = (typeof PLACEMENT_ROLES)[number];
export type Placement = { readonly [R in PlacementRole]?: readonly string[] | undefined };

/** Where a service goes when lab.placement does not say: the manager, so a one-node swarm runs it all. */
export const DEFAULT_CONSTRAINTS: readonly string[] = ['node.role == manager'];

const ROLE_OF: Record<string, PlacementRole> = {
  redis: 'redis',
  postgres: 'postgres',
  toxiproxy: 'proxy',
  prometheus: 'observers',
  'llm-stub': 'observers',
  control: 'observers',
};

/** The stack's services: the lab's core and Prometheus; Grafana stays a compose-only service (its provisioning is folders, which swarm configs cannot carry). */
export const STACK_SERVICES = ['api', 'redis', 'postgres', 'toxiproxy', 'prometheus'] as const;

/** The service the orchestrator's port-forwards run in (forward.ts): not in the compose file. */
export const CONTROL_SERVICE = 'control';

/** The control channel's far end, compiled beside this file (dist/services/control/pipe.js). */
const PIPE_FILE = fileURLToPath(new URL('../../../services/control/pipe.js', import.meta.url));

/** The data directories the images declare as VOLUME (docker-compose.yml's images and the offline stand-ins). */
const DATA_DIRS: Record<string, string> = {
  redis: '/data',
  postgres: '/var/lib/postgresql/data',
  prometheus: '/prometheus',
};

/** Where docker-compose.yml mounts Prometheus's configuration (the swarm's is generated: prometheusConfig.ts). */
const PROMETHEUS_CONFIG = '/etc/prometheus/prometheus.yml';

/** Options of docker-compose.yml's services that `docker stack deploy` refuses or ignores. */
export const SWARM_REJECTED = ['build', 'depends_on', 'profiles', 'container_name', 'restart'] as const;

export interface StackOptions {
  /** The stack's name (its services are <stack>_<service>). */
  readonly stack: string;
  /** Api replicas: services api, api1…; at least 1. */
  readonly replicas: number;
  /** Each replica's METABENCH_API_FLAGS; absent: the compose file's (the variable, else its default), as `lab up` starts it. */
  readonly flagsOf?: ((i: number) => string) | undefined;
  /** The environment over the env file's values, for the compose file's ${VARS}. */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly placement?: Placement | undefined;
  /** Prometheus too (lab up); a run deploys the core alone when the stack has none. */
  readonly observers: boolean;
  /** Where Prometheus scrapes the orchestrator's client metrics, with a token; absent: host.docker.internal, as in the docker lab. */
  readonly clientScrape?: ClientScrape | undefined;
  /** A value that changes per run: set as a container label of the api replicas, so each run gets fresh api tasks. */
  readonly generation?: string;
  /**
   * The clients' link to the api (apiLinkPorts.ts), for a run that uses it: toxiproxy also
   * publishes its link to each replica, host mode, on a port the engine picks (task discovery
   * reads it back), as the entry of the run.
   */
  readonly apiLink?: boolean | undefined;
}

type Doc = Record<string, unknown>;

/**
 * The stack file's key for files generated with it (file name → content): deployStack writes
 * them beside the stack file and points their configs there, and leaves the key out.
 */
export const GENERATED_FILES = 'x-metabench-files';
type Service = Record<string, unknown>;

/**
 * The stack without its api replicas: what is deployed, and waited for, first. A stack has no
 * `depends_on`, and the api exits when Redis or Postgres (through the proxy) does not answer
 * at its start; its restart policy `none` then leaves it down. Compose starts it after its
 * dependencies are healthy; this is the same order.
 */
export function dependenciesFirst(doc: Doc): Doc {
  const services = (doc.services ?? {}) as Record<string, Service>;
  return {
    ...doc,
    services: Object.fromEntries(Object.entries(services).filter(([s]) => replicaOfService(s) === undefined)),
  };
}

/** docker-compose.yml (merge keys resolved) and the folder its relative paths start from, as a stack's Doc. */
export function readCompose(file: string): { doc: Doc; dir: string } {
  const c = readComposeFile(file);
  return { doc: c.doc as Doc, dir: c.dir };
}

/**
 * The stack file for `docker stack deploy`, as an object (written as JSON, which the
 * docker CLI reads as YAML). `readFile` reads a bind-mounted file (to name its config
 * by its content: swarm configs are immutable, so a changed file is a new config).
 */
export function stackFile(
  compose: { doc: Doc; dir: string },
  o: StackOptions,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): Doc {
  const services = (compose.doc.services ?? {}) as Record<string, Service>;
  const base = Number(o.env.METABENCH_API_PORT || 8080);
  const why = replicaPortsProblem(o.replicas, base);
  if (why) throw new BenchError('E_LAB_PREFLIGHT', why);
  const configs: Record<string, Doc> = {};
  const volumes: Record<string, Doc> = {};
  const files: Record<string, string> = {};
  const out: Record<string, Service> = {};
  const wanted = STACK_SERVICES.filter((s) => s !== 'prometheus' || o.observers);
  for (const name of wanted) {
    const svc = services[name];
    if (!svc) throw new BenchError('E_LAB_PREFLIGHT', `the compose file has no service ${name}`);
    if (name === 'api') {
      for (let i = 0; i < o.replicas; i++)
        out[apiService(i)] = swarmService(
          'api',
          svc,
          'api',
          compose.dir,
          o,
          { configs, volumes, files },
          readFile,
          {
            flags: o.flagsOf ? o.flagsOf(i) : undefined,
            port: base + i,
          },
        );
    } else
      out[name] = swarmService(
        name,
        svc,
        ROLE_OF[name]!,
        compose.dir,
        o,
        { configs, volumes, files },
        readFile,
      );
  }
  if (o.apiLink && out.toxiproxy)
    out.toxiproxy.ports = [
      ...((out.toxiproxy.ports ?? []) as Doc[]),
      ...Array.from({ length: o.replicas }, (_, i) => ({
        target: API_LINK_PORT_BASE + i,
        protocol: 'tcp',
        mode: 'host',
      })),
    ];
  const image = typeof services.api?.image === 'string' ? interpolate(services.api.image, o.env) : undefined;
  if (image) out[CONTROL_SERVICE] = controlService(image, o, { configs, files }, readFile);
  return {
    version: '3.8',
    services: out,
    secrets: stackSecrets(o.stack),
    ...(Object.keys(configs).length > 0 ? { configs } : {}),
    ...(Object.keys(volumes).length > 0 ? { volumes } : {}),
    ...(Object.keys(files).length > 0 ? { [GENERATED_FILES]: files } : {}),
    // The stack's overlay network; attachable, so a one-off container can join it to look around.
    networks: { default: { driver: 'overlay', attachable: true } },
  };
}

function swarmService(
  name: string,
  svc: Service,
  role: PlacementRole,
  dir: string,
  o: StackOptions,
  top: { configs: Record<string, Doc>; volumes: Record<string, Doc>; files: Record<string, string> },
  readFile: (path: string) => string,
  api?: { flags: string | undefined; port: number },
): Service {
  const env = o.env;
  const out: Service = {};
  for (const [k, v] of Object.entries(svc)) {
    if ((SWARM_REJECTED as readonly string[]).includes(k) || k === 'ports' || k === 'volumes') continue;
    out[k] = v;
  }
  if (typeof svc.image === 'string') out.image = interpolate(svc.image, env);
  if (typeof svc.command === 'string')
    out.command =
      api?.flags !== undefined
        ? svc.command.replace(/\$\{METABENCH_API_FLAGS(?:[:-][^}]*)?\}/, () => api.flags!)
        : interpolate(svc.command, env);
  // Only the entry is published (host mode: on the node that runs the task, on every interface:
  // swarm has no host IP binding). The one other exception belongs here: for a run through the
  // api link, toxiproxy's link ports (one per replica: engine/apiLinkPorts.ts), the clients' entry.
  const ports: Doc[] = [];
  if (api)
    for (const p of (svc.ports ?? []) as unknown[]) {
      if (typeof p !== 'string') continue;
      const parts = interpolate(p, env).split(':');
      ports.push({
        target: Number(parts[parts.length - 1]),
        published: api.port,
        protocol: 'tcp',
        mode: 'host',
      });
    }
  if (ports.length > 0) out.ports = ports;
  const mounts: Doc[] = [];
  const cfgs: Doc[] = [];
  for (const v of (svc.volumes ?? []) as unknown[]) {
    if (typeof v !== 'string') continue;
    const [src, target] = v.split(':');
    if (!src || !target || !(src.startsWith('.') || src.startsWith('/')))
      throw new BenchError('E_LAB_PREFLIGHT', `volume "${v}": only bind-mounted files become swarm configs`);
    const path = isAbsolute(src) ? src : resolve(dir, src);
    const generated =
      name === 'prometheus' && target === PROMETHEUS_CONFIG
        ? swarmPrometheusConfig(o.stack, readFile(path), src, o.clientScrape)
        : undefined;
    cfgs.push({
      source: addConfig(top, o.stack, target, generated ?? readFile(path), generated ? undefined : path),
      target,
    });
  }
  const data = DATA_DIRS[name];
  if (data) {
    top.volumes[`${name}-data`] = {};
    mounts.push({ type: 'volume', source: `${name}-data`, target: data });
  }
  if (name === 'prometheus') {
    mounts.push({ type: 'bind', source: ENGINE_SOCKET, target: ENGINE_SOCKET, read_only: true });
    out.user = 'root';
  }
  if (mounts.length > 0) out.volumes = mounts;
  if (cfgs.length > 0) out.configs = cfgs;
  if (api && o.generation !== undefined) out.labels = { 'metabench.generation': o.generation };
  const hba = name === 'postgres' ? addConfig(top, o.stack, 'pg_hba.conf', PG_HBA) : undefined;
  Object.assign(out, withCredentials(api ? 'api' : name, out, hba));
  out.deploy = {
    mode: 'replicated',
    replicas: 1,
    endpoint_mode: 'dnsrr',
    restart_policy: { condition: 'none' },
    placement: { constraints: constraintsOf(name, o.placement?.[role] ?? DEFAULT_CONSTRAINTS) },
  };
  return out;
}

/**
 * The config of a file a service reads (`target`): named by its content, since swarm configs are
 * immutable and a changed file is a new config. `path` names the file on this machine; without
 * it, the content is generated and written beside the stack file (GENERATED_FILES). Its key.
 */
function addConfig(
  top: { configs: Record<string, Doc>; files: Record<string, string> },
  stack: string,
  target: string,
  content: string,
  path?: string,
): string {
  const hash = createHash('sha256').update(content).digest('hex').slice(0, 12);
  const key = basename(target).replace(/[^A-Za-z0-9]+/g, '-');
  // The engine takes config names of at most 64 characters: a long stack name is cut, not the content hash.
  const name = `${stack.slice(0, Math.max(1, 64 - key.length - hash.length - 2))}_${key}_${hash}`;
  if (path === undefined) top.files[`${key}-${hash}`] = content;
  top.configs[key] = { file: path ?? `${key}-${hash}`, name };
  return key;
}

/**
 * The control service: a container of the api image on the stack's network, idle, in which the
 * orchestrator's port-forwards run pipe.ts (shipped as a config, so any api image with node
 * will do); it reads the stack's secrets for the orchestrator. Placed with the observers.
 */
function controlService(
  image: string,
  o: StackOptions,
  top: { configs: Record<string, Doc>; files: Record<string, string> },
  readFile: (path: string) => string,
): Service {
  const script = addConfig(top, o.stack, CONTROL_SCRIPT, readFile(PIPE_FILE), PIPE_FILE);
  return withCredentials(CONTROL_SERVICE, {
    image,
    entrypoint: ['node'],
    command: [CONTROL_SCRIPT],
    configs: [{ source: script, target: CONTROL_SCRIPT }],
    deploy: {
      mode: 'replicated',
      replicas: 1,
      endpoint_mode: 'dnsrr',
      restart_policy: { condition: 'none' },
      placement: { constraints: [...(o.placement?.observers ?? DEFAULT_CONSTRAINTS)] },
    },
  });
}

/** A service's placement constraints: its role's, and for Prometheus a manager's too (its discovery lists tasks, which only a manager does). */
function constraintsOf(service: string, role: readonly string[]): string[] {
  const manager = 'node.role == manager';
  return service === 'prometheus' && !role.some((c) => c.replace(/\s+/g, '') === 'node.role==manager')
    ? [...role, manager]
    : [...role];
}
