import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, isAbsolute, resolve } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import { apiService } from '../engine/replicas.js';
import { interpolate } from '../engine/images.js';
import { replicaSeed } from '../labConfig.js';

/**
 * The lab as a set of Kubernetes objects (`metabench lab manifests --kubernetes`), generated
 * from docker-compose.yml as the swarm stack is, so there is one description of the lab.
 * Not a runtime: nothing here talks to a cluster. What the translation does, and why:
 * - each service is a Deployment of one pod (strategy Recreate: never two pods of one
 *   service, as a swarm service has one task); api replica i is a Deployment of its own
 *   (`api`, `api1`…, as on swarm) with its own seed;
 * - the compose `command` becomes the container's `args` (both replace the image's CMD and
 *   keep its ENTRYPOINT); a healthcheck becomes a readiness probe, never a liveness probe: a
 *   paused or overloaded api is the experiment, and the kubelet must not restart it;
 * - bind-mounted files become a ConfigMap per service, mounted file by file (subPath) where
 *   compose mounts them; the images' data directories are emptyDir (a lab keeps nothing);
 * - Postgres gets a generated password instead of trust, Redis `requirepass` (a config
 *   file), both in one Secret mounted at /run/secrets, where the api's password-file flags
 *   read them as on swarm;
 * - every service resolves by its compose name (a Service per Deployment, ClusterIP), so
 *   toxiproxy.json's upstreams and prometheus.yml's targets work unchanged; the entry, each
 *   api replica, is a NodePort Service: the load generator runs outside the cluster and
 *   reaches each replica itself, as it does a swarm replica's published port;
 * - NetworkPolicies deny every ingress to the lab's pods but the entry's port, the api's
 *   links into the fault proxy, the proxy's to Redis and Postgres and Prometheus's scrapes.
 */

/** The lab's services in the manifests: the stack's (Grafana stays compose-only). */
export const MANIFEST_SERVICES = ['api', 'redis', 'postgres', 'toxiproxy', 'prometheus'] as const;
type ServiceName = (typeof MANIFEST_SERVICES)[number];

/** Each service's role (lab.placement's names), the label NetworkPolicies select on. */
const ROLE: Record<ServiceName, string> = {
  api: 'api',
  redis: 'redis',
  postgres: 'postgres',
  toxiproxy: 'proxy',
  prometheus: 'observers',
};

/** The data directories the images declare as VOLUME: an emptyDir each. */
const DATA_DIRS: Partial<Record<ServiceName, string>> = {
  redis: '/data',
  postgres: '/var/lib/postgresql/data',
  prometheus: '/prometheus',
};

/** Compose options with no Kubernetes counterpart here, left out: ordering, restarts, builds, the host's gateway. */
const DROPPED = ['build', 'depends_on', 'restart', 'profiles', 'container_name', 'extra_hosts'];
/** Compose options translated. Any other is refused, so a change of the compose file is never dropped unseen. */
const TRANSLATED = ['image', 'command', 'ports', 'volumes', 'environment', 'healthcheck'];

export const PART_OF = 'app.kubernetes.io/part-of';
export const NAME = 'app.kubernetes.io/name';
export const COMPONENT = 'app.kubernetes.io/component';
const LAB = 'metabench';

/** The Secret with the lab's credentials, and its keys. */
export const SECRET = 'metabench-credentials';
export const POSTGRES_PASSWORD = 'postgres-password';
export const REDIS_PASSWORD = 'redis-password';
const REDIS_CONF = 'redis-auth.conf';
/** Where the Secret's files are mounted (as swarm mounts its secrets). */
const SECRETS_DIR = '/run/secrets';

/** The NodePort range of a default cluster: METABENCH_API_PORT + i is asked for only inside it. */
const NODE_PORTS = [30000, 32767] as const;

export interface KubernetesObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly [field: string]: unknown;
}

export interface ManifestOptions {
  /** Api replicas: Deployments api, api1…; at least 1. */
  readonly replicas: number;
  /** The environment over the env file's values, for the compose file's ${VARS}. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** A new secret value (tests pass their own); by default 24 random bytes, base64url. */
  readonly secret?: () => string;
}

type Doc = Record<string, unknown>;
type Svc = Record<string, unknown>;

/**
 * The lab's Kubernetes objects, in the order `kubectl apply` should meet them: the Secret,
 * ConfigMaps, Services, Deployments, NetworkPolicies. `readFile` reads a bind-mounted file.
 */
export function kubernetesManifests(
  compose: { doc: Doc; dir: string },
  o: ManifestOptions,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): KubernetesObject[] {
  if (!Number.isInteger(o.replicas) || o.replicas < 1)
    throw new BenchError('E_USAGE', `--replicas ${o.replicas}: at least one api replica`);
  const services = (compose.doc.services ?? {}) as Record<string, Svc>;
  const secret = o.secret ?? (() => randomBytes(24).toString('base64url'));
  const redisPassword = secret();
  const out = {
    configMaps: [] as KubernetesObject[],
    services: [] as KubernetesObject[],
    deployments: [] as KubernetesObject[],
  };
  // Each service's own ports (compose's published targets), and the fault proxy's links.
  const own: Partial<Record<ServiceName, number[]>> = {};
  let proxyPorts: number[] = [];
  for (const name of MANIFEST_SERVICES) {
    const svc = services[name];
    if (!svc) throw new BenchError('E_LAB_PREFLIGHT', `the compose file has no service ${name}`);
    for (const k of Object.keys(svc))
      if (!TRANSLATED.includes(k) && !DROPPED.includes(k))
        throw new BenchError(
          'E_LAB_PREFLIGHT',
          `the compose file's service ${name} has "${k}", which the Kubernetes manifests do not translate`,
        );
    const files = mountedFiles(name, svc, compose.dir, readFile);
    if (files.length > 0) out.configMaps.push(configMap(name, files));
    if (name === 'toxiproxy') proxyPorts = linkPorts(files);
    own[name] = containerPorts(name, svc, o.env);
    const ports = [...own[name], ...(name === 'toxiproxy' ? proxyPorts : [])];
    const replicas = name === 'api' ? o.replicas : 1;
    for (let i = 0; i < replicas; i++) {
      const service = name === 'api' ? apiService(i) : name;
      out.services.push(
        k8sService(service, ROLE[name], ports, name === 'api' ? entryNodePort(o.env, i) : undefined),
      );
      out.deployments.push(deployment(service, name, svc, o.env, files, ports, i));
    }
  }
  return [
    secretObject(secret(), redisPassword),
    ...out.configMaps,
    ...out.services,
    ...out.deployments,
    ...networkPolicies(own, proxyPorts),
  ];
}

function labels(service: string, role: string): Record<string, string> {
  return { [PART_OF]: LAB, [NAME]: service, [COMPONENT]: role };
}

function meta(name: string, role: string): KubernetesObject['metadata'] {
  return { name, labels: labels(name, role) };
}

function secretObject(postgres: string, redis: string): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: SECRET, labels: { [PART_OF]: LAB } },
    type: 'Opaque',
    stringData: {
      [POSTGRES_PASSWORD]: postgres,
      [REDIS_PASSWORD]: redis,
      // Redis reads its password from a config file, not from its arguments (which `ps` shows).
      [REDIS_CONF]: `requirepass ${redis}\n`,
    },
  };
}

interface MountedFile {
  /** The file's key in its service's ConfigMap (the mount target's base name). */
  readonly key: string;
  readonly target: string;
  readonly content: string;
}

/** The files a service bind-mounts (`./path:/target[:ro]`), read from beside the compose file. */
function mountedFiles(
  service: string,
  svc: Svc,
  dir: string,
  readFile: (path: string) => string,
): MountedFile[] {
  const out: MountedFile[] = [];
  for (const v of (svc.volumes ?? []) as unknown[]) {
    const [src, target] = typeof v === 'string' ? v.split(':') : [];
    if (!src || !target || !(src.startsWith('.') || src.startsWith('/')))
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `service ${service}, volume ${JSON.stringify(v)}: only bind-mounted files become ConfigMaps`,
      );
    const key = basename(target);
    if (out.some((f) => f.key === key))
      throw new BenchError('E_LAB_PREFLIGHT', `service ${service} mounts two files named ${key}`);
    out.push({ key, target, content: readFile(isAbsolute(src) ? src : resolve(dir, src)) });
  }
  return out;
}

function configMap(service: ServiceName, files: readonly MountedFile[]): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: meta(`${service}-files`, ROLE[service]),
    data: Object.fromEntries(files.map((f) => [f.key, f.content])),
  };
}

/** The fault proxy's link ports: the `listen` ports of its configuration (toxiproxy.json). */
function linkPorts(files: readonly MountedFile[]): number[] {
  const config = files.find((f) => f.key.endsWith('.json'));
  if (!config) throw new BenchError('E_LAB_PREFLIGHT', 'service toxiproxy mounts no .json configuration');
  let proxies: unknown;
  try {
    proxies = JSON.parse(config.content);
  } catch (err) {
    throw new BenchError('E_LAB_PREFLIGHT', `${config.key}: ${(err as Error).message}`);
  }
  if (!Array.isArray(proxies))
    throw new BenchError('E_LAB_PREFLIGHT', `${config.key}: not a list of proxies`);
  return proxies.map((p: { name?: unknown; listen?: unknown }, i) => {
    const port = Number(/:(\d+)$/.exec(String(p.listen))?.[1]);
    if (!(port >= 1 && port <= 65535))
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `${config.key}, proxy ${i + 1} (${String(p.name)}): listen has no port`,
      );
    return port;
  });
}

/** The container ports a service publishes in compose (the target of `host:published:target`). */
function containerPorts(service: string, svc: Svc, env: ManifestOptions['env']): number[] {
  return ((svc.ports ?? []) as unknown[]).map((p) => {
    const port = Number(interpolate(String(p), env).split(':').pop());
    if (!(Number.isInteger(port) && port >= 1 && port <= 65535))
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `service ${service}, port ${JSON.stringify(p)}: no container port`,
      );
    return port;
  });
}

/** Replica i's node port: METABENCH_API_PORT + i when a default cluster allows it, else the cluster's choice. */
function entryNodePort(env: ManifestOptions['env'], i: number): number | undefined {
  const port = Number(env.METABENCH_API_PORT || 8080) + i;
  return port >= NODE_PORTS[0] && port <= NODE_PORTS[1] ? port : undefined;
}

function k8sService(
  name: string,
  role: string,
  ports: readonly number[],
  nodePort: number | undefined,
): KubernetesObject {
  const entry = role === 'api';
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(name, role),
    spec: {
      type: entry ? 'NodePort' : 'ClusterIP',
      selector: { [PART_OF]: LAB, [NAME]: name },
      ports: ports.map((port, i) => ({
        name: `tcp-${port}`,
        port,
        targetPort: port,
        protocol: 'TCP',
        ...(entry && i === 0 && nodePort !== undefined ? { nodePort } : {}),
      })),
    },
  };
}

/** A compose duration (`10s`, `1m30s`, `500ms`) in whole seconds, at least 1. */
export function durationSeconds(s: unknown, field: string): number {
  const text = String(s);
  const units: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 0.001, us: 1e-6 };
  let total = 0;
  let rest = text;
  for (;;) {
    const m = /^(\d+(?:\.\d+)?)(h|ms|m|s|us)/.exec(rest);
    if (!m) break;
    total += Number(m[1]) * units[m[2]!]!;
    rest = rest.slice(m[0].length);
  }
  if (rest !== '' || text === '')
    throw new BenchError('E_LAB_PREFLIGHT', `${field}: "${text}" is not a duration like 10s or 1m30s`);
  return Math.max(1, Math.ceil(total));
}

/** A compose healthcheck as a readiness probe (an exec of the same command, on the same schedule). */
function readinessProbe(service: string, hc: unknown): Doc | undefined {
  if (hc === undefined) return undefined;
  const h = hc as {
    test?: unknown;
    interval?: unknown;
    timeout?: unknown;
    retries?: unknown;
    start_period?: unknown;
  };
  const test = h.test;
  const command = Array.isArray(test)
    ? test[0] === 'CMD'
      ? test.slice(1).map(String)
      : test[0] === 'CMD-SHELL'
        ? ['/bin/sh', '-c', String(test[1])]
        : undefined
    : typeof test === 'string'
      ? ['/bin/sh', '-c', test]
      : undefined;
  if (!command)
    throw new BenchError('E_LAB_PREFLIGHT', `service ${service}: healthcheck.test is not CMD or CMD-SHELL`);
  const f = `service ${service}, healthcheck`;
  return {
    exec: { command },
    ...(h.interval !== undefined ? { periodSeconds: durationSeconds(h.interval, `${f}.interval`) } : {}),
    ...(h.timeout !== undefined ? { timeoutSeconds: durationSeconds(h.timeout, `${f}.timeout`) } : {}),
    ...(h.start_period !== undefined
      ? { initialDelaySeconds: durationSeconds(h.start_period, `${f}.start_period`) }
      : {}),
    ...(typeof h.retries === 'number' ? { failureThreshold: h.retries } : {}),
  };
}

/** The compose command as the container's args: a list as it is, a string split on spaces (compose splits it shell-style; quotes are refused). */
function args(service: string, command: unknown, env: ManifestOptions['env']): string[] | undefined {
  if (command === undefined) return undefined;
  if (Array.isArray(command)) return command.map((c) => interpolate(String(c), env));
  const text = interpolate(String(command), env);
  if (/['"\\]/.test(text))
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `service ${service}: a command string with quotes; write it as a list`,
    );
  return text.split(/\s+/).filter((a) => a !== '');
}

/** Api replica i's args: the compose command's, with its own seed (replicaSeed of the flags' --seed, else the api's default 1). */
function apiArgs(base: string[], i: number): string[] {
  const at = base.indexOf('--seed');
  const seed = at >= 0 ? Number(base[at + 1]) : 1;
  if (!Number.isInteger(seed))
    throw new BenchError('E_LAB_PREFLIGHT', `api flags: --seed ${base[at + 1]} is not a whole number`);
  const rest = at >= 0 ? [...base.slice(0, at), ...base.slice(at + 2)] : base;
  return [...rest, '--seed', String(replicaSeed(seed, i))];
}

/** A password file, where the Secret's keys are mounted (as swarm mounts its secrets). */
const secretFile = (key: string): string => `${SECRETS_DIR}/${key}`;

/**
 * What each service takes of the Secret: its files (mounted at /run/secrets), variables,
 * extra args. Files, not variables, where the program reads one: a variable's value is in
 * the process's environment for anyone who reads /proc.
 */
function credentials(name: ServiceName): { files: string[]; env: Doc[]; args: string[] } {
  switch (name) {
    case 'postgres':
      // The image sets the role's password at its first start (an emptyDir: every start).
      return {
        files: [POSTGRES_PASSWORD],
        env: [{ name: 'POSTGRES_PASSWORD_FILE', value: secretFile(POSTGRES_PASSWORD) }],
        args: [],
      };
    case 'redis':
      // requirepass is in its configuration file; redis-cli (the readiness probe) takes REDISCLI_AUTH.
      return {
        files: [REDIS_CONF],
        env: [{ name: 'REDISCLI_AUTH', valueFrom: { secretKeyRef: { name: SECRET, key: REDIS_PASSWORD } } }],
        args: [],
      };
    case 'api':
      // The api's flags, as the swarm stack gives them.
      return {
        files: [REDIS_PASSWORD, POSTGRES_PASSWORD],
        env: [],
        args: [
          '--redis-password-file',
          secretFile(REDIS_PASSWORD),
          '--postgres-password-file',
          secretFile(POSTGRES_PASSWORD),
        ],
      };
    default:
      return { files: [], env: [], args: [] };
  }
}

function deployment(
  service: string,
  name: ServiceName,
  svc: Svc,
  env: ManifestOptions['env'],
  files: readonly MountedFile[],
  ports: readonly number[],
  replica: number,
): KubernetesObject {
  const role = ROLE[name];
  const cred = credentials(name);
  let containerArgs = args(name, svc.command, env);
  if (name === 'api' && containerArgs) containerArgs = [...apiArgs(containerArgs, replica), ...cred.args];
  // Redis's first argument is its configuration file: the Secret's requirepass.
  if (name === 'redis' && containerArgs?.[0] === 'redis-server')
    containerArgs = ['redis-server', secretFile(REDIS_CONF), ...containerArgs.slice(1)];
  const environment = Object.entries((svc.environment ?? {}) as Record<string, unknown>)
    // Trust is what the generated password replaces.
    .filter(([k]) => !(name === 'postgres' && k === 'POSTGRES_HOST_AUTH_METHOD'))
    .map(([k, v]) => ({ name: k, value: interpolate(String(v), env) }));
  const volumes: Doc[] = [];
  const mounts: Doc[] = [];
  if (files.length > 0) {
    volumes.push({ name: 'files', configMap: { name: `${name}-files` } });
    for (const f of files)
      mounts.push({ name: 'files', mountPath: f.target, subPath: f.key, readOnly: true });
  }
  const data = DATA_DIRS[name];
  if (data) {
    volumes.push({ name: 'data', emptyDir: {} });
    mounts.push({ name: 'data', mountPath: data });
  }
  if (cred.files.length > 0) {
    volumes.push({
      name: 'credentials',
      secret: {
        secretName: SECRET,
        items: cred.files.map((key) => ({ key, path: key })),
        // Readable by the image's own user (Redis and Postgres drop root; the pod's containers only).
        defaultMode: 0o444,
      },
    });
    mounts.push({ name: 'credentials', mountPath: SECRETS_DIR, readOnly: true });
  }
  const probe = readinessProbe(name, svc.healthcheck);
  const selector = { [PART_OF]: LAB, [NAME]: service };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(service, role),
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: labels(service, role) },
        spec: {
          // None of the lab's programs talks to the Kubernetes API, nor reads service link variables.
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          containers: [
            {
              name,
              image: interpolate(String(svc.image), env),
              imagePullPolicy: 'IfNotPresent',
              ...(containerArgs ? { args: containerArgs } : {}),
              ports: ports.map((containerPort) => ({ containerPort, protocol: 'TCP' })),
              ...(environment.length + cred.env.length > 0 ? { env: [...environment, ...cred.env] } : {}),
              ...(mounts.length > 0 ? { volumeMounts: mounts } : {}),
              ...(probe ? { readinessProbe: probe } : {}),
            },
          ],
          ...(volumes.length > 0 ? { volumes } : {}),
        },
      },
    },
  };
}

const role = (r: string): Doc => ({ matchLabels: { [PART_OF]: LAB, [COMPONENT]: r } });
const tcp = (ports: readonly number[]): Doc[] => ports.map((port) => ({ port, protocol: 'TCP' }));

/** An ingress policy for the pods of role `to`: `from` a role (or anywhere) on `ports`. */
function allow(
  name: string,
  to: string,
  rules: { from?: string; ports: readonly number[] }[],
): KubernetesObject {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, labels: { [PART_OF]: LAB } },
    spec: {
      podSelector: role(to),
      policyTypes: ['Ingress'],
      ingress: rules.map((r) => ({
        ...(r.from ? { from: [{ podSelector: role(r.from) }] } : {}),
        ports: tcp(r.ports),
      })),
    },
  };
}

/**
 * No ingress to the lab's pods but: the entry (the api's port, from anywhere: the clients,
 * Prometheus), the api into the fault proxy's links, the proxy to Redis and Postgres, and
 * Prometheus to the proxy's metrics. Policies add up, so the deny selects every lab pod and
 * each allow opens one path. The orchestrator reaches the rest through the API server
 * (`kubectl port-forward`), which no NetworkPolicy stands in.
 */
function networkPolicies(
  own: Partial<Record<ServiceName, readonly number[]>>,
  proxyPorts: readonly number[],
): KubernetesObject[] {
  return [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'metabench-deny-ingress', labels: { [PART_OF]: LAB } },
      spec: { podSelector: { matchLabels: { [PART_OF]: LAB } }, policyTypes: ['Ingress'] },
    },
    allow('metabench-api-entry', 'api', [{ ports: own.api ?? [] }]),
    // Also said on its own: narrowing the entry (to a client's address block, say) keeps the scrape.
    allow('metabench-api-scrape', 'api', [{ from: 'observers', ports: own.api ?? [] }]),
    allow('metabench-proxy-links', 'proxy', [
      { from: 'api', ports: proxyPorts },
      { from: 'observers', ports: own.toxiproxy ?? [] },
    ]),
    allow('metabench-redis-from-proxy', 'redis', [{ from: 'proxy', ports: own.redis ?? [] }]),
    allow('metabench-postgres-from-proxy', 'postgres', [{ from: 'proxy', ports: own.postgres ?? [] }]),
  ];
}
