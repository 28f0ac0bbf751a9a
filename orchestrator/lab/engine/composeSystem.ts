import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { BenchError } from '../../../foundation/errors.js';
import { parseEnvFile } from './images.js';

/**
 * A system under test given as the user's own compose file (system.compose): metabench runs it
 * as a compose project with a generated override (`-f user.yml -f override.json`, merged by
 * compose v1 and v2 alike, as the replica override is) that adds a fault proxy service with one
 * proxy per declared link, points each dependent at its proxy by rewriting the environment
 * variable it reads the dependency's address from, and publishes the entry's port and the
 * proxy's API on 127.0.0.1 only, each on a port the engine picks (so none can clash).
 */

/** The compose service the override adds: the fault proxy (Toxiproxy's API, our stand-in offline). */
export const PROXY_SERVICE = 'metabench-faultproxy';
/** The proxy's API port inside its container (Toxiproxy's). */
export const PROXY_API_PORT = 8474;
/** Link i listens in the proxy's container on LINK_PORT_BASE + i. */
export const LINK_PORT_BASE = 21000;

/** One dependency put behind the fault proxy: `from` reaches `service:port` at the address in `env`. */
export interface ComposeLink {
  /** What link triggers name (`link:`). */
  readonly name: string;
  /** The dependency's compose service and the port it listens on in its container. */
  readonly service: string;
  readonly port: number;
  /** The dependent's environment variable that holds the dependency's address. */
  readonly env: string;
  /** The dependent compose service. */
  readonly from: string;
}

export interface ComposeSystemConfig {
  /** The user's compose file. */
  readonly file: string;
  readonly project: string;
  /** The service the load goes to, the port it listens on in its container, and its health path. */
  readonly entry: { readonly service: string; readonly port: number; readonly health?: string | undefined };
  readonly links: readonly ComposeLink[];
}

type ServiceDef = Record<string, unknown>;

/** A compose file's services (merge keys resolved), with the line each service's fields start on. */
export interface ComposeFileServices {
  readonly services: Readonly<Record<string, ServiceDef>>;
  /** `services.<name>` → its 1-based line in the file, for error messages. */
  readonly lines: Readonly<Record<string, number>>;
}

/** Reads the compose file's services; throws E_USAGE naming the file when it is missing or no compose file. */
export function readComposeServices(file: string): ComposeFileServices {
  if (!existsSync(file)) throw new BenchError('E_USAGE', `${file}: no such compose file`);
  const text = readFileSync(file, 'utf8');
  const lc = new LineCounter();
  const doc = parseDocument(text, { merge: true, lineCounter: lc });
  if (doc.errors.length > 0)
    throw new BenchError('E_USAGE', `${file}: not YAML (${doc.errors[0]!.message.split('\n')[0]})`);
  const js = doc.toJS() as { services?: unknown } | null;
  const services = js?.services;
  if (!services || typeof services !== 'object' || Array.isArray(services))
    throw new BenchError('E_USAGE', `${file}: no services: section, so not a compose file`);
  const lines: Record<string, number> = {};
  const node = doc.get('services', true) as { items?: { key: { value?: unknown; range?: number[] } }[] };
  for (const item of node?.items ?? [])
    if (item.key?.range) lines[String(item.key.value)] = lc.linePos(item.key.range[0]!).line;
  return { services: services as Record<string, ServiceDef>, lines };
}

/** A service's environment as a map (compose takes a map or a list of KEY=VALUE). */
export function serviceEnvironment(def: ServiceDef): Record<string, string | undefined> {
  const env = def.environment;
  if (Array.isArray(env)) {
    const out: Record<string, string | undefined> = {};
    for (const e of env) {
      const s = String(e);
      const eq = s.indexOf('=');
      if (eq < 0) out[s] = undefined;
      else out[s.slice(0, eq)] = s.slice(eq + 1);
    }
    return out;
  }
  if (env && typeof env === 'object')
    return Object.fromEntries(
      Object.entries(env as Record<string, unknown>).map(([k, v]) => [k, v == null ? undefined : String(v)]),
    );
  return {};
}

/** One problem with the system against its compose file: the field (under system.compose) and why. */
export interface ComposeProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The dependency's address as the dependent's variable names it: `service:port`. */
function addressOf(l: Pick<ComposeLink, 'service' | 'port'>): string {
  return `${l.service}:${l.port}`;
}

/**
 * What the compose file makes impossible (empty: none): the entry, every link's service and
 * dependent must be services of the file; each link's variable must be set in the dependent's
 * environment to a value that names `service:port` (that is the address metabench rewrites);
 * the override's own service name must be free; link names unique.
 */
export function composeSystemProblems(
  cfg: Omit<ComposeSystemConfig, 'project' | 'file'>,
  file: ComposeFileServices,
): ComposeProblem[] {
  const names = Object.keys(file.services);
  const declared = `the file's services: ${names.join(', ')}`;
  const out: ComposeProblem[] = [];
  if (!file.services[cfg.entry.service])
    out.push({ path: ['entry', 'service'], message: `no service "${cfg.entry.service}" (${declared})` });
  if (file.services[PROXY_SERVICE])
    out.push({
      path: [],
      message: `the file has a service named ${PROXY_SERVICE}, the name of the fault proxy metabench adds: rename it`,
    });
  const seen = new Set<string>();
  cfg.links.forEach((l, i) => {
    if (seen.has(l.name))
      out.push({
        path: ['links', i, 'name'],
        message: `two links are named "${l.name}": give each its own name`,
      });
    seen.add(l.name);
    for (const k of ['service', 'from'] as const)
      if (!file.services[l[k]])
        out.push({ path: ['links', i, k], message: `no service "${l[k]}" (${declared})` });
    if (l.service === l.from)
      out.push({ path: ['links', i, 'from'], message: 'a service does not depend on itself' });
    const from = file.services[l.from];
    if (!from) return;
    const env = serviceEnvironment(from);
    const value = env[l.env];
    const at = file.lines[l.from] ? ` (line ${file.lines[l.from]})` : '';
    if (!(l.env in env))
      out.push({
        path: ['links', i, 'env'],
        message: `service ${l.from}${at} sets no ${l.env} in its environment: declare ${l.env}: http://${addressOf(l)} there, so metabench can point it at the fault proxy`,
      });
    else if (value === undefined || !value.includes(addressOf(l)))
      out.push({
        path: ['links', i, 'env'],
        message: `${l.env} of service ${l.from}${at} is ${value === undefined ? 'unset' : `"${value}"`}, which does not name ${addressOf(l)}: metabench rewrites that address to the fault proxy's`,
      });
  });
  return out;
}

/** The fault proxy's address for link i on the compose network. */
export function proxyAddress(i: number): string {
  return `${PROXY_SERVICE}:${LINK_PORT_BASE + i}`;
}

/**
 * The override document (JSON, which compose reads as YAML): the fault proxy service, each
 * dependent's variable pointing at its link's proxy, the entry's port and the proxy's API
 * published on 127.0.0.1 on ports the engine picks. Throws E_USAGE with the problems when the
 * file does not fit the system (composeSystemProblems).
 */
export function composeSystemOverride(
  cfg: ComposeSystemConfig,
  file: ComposeFileServices,
  proxyImage: string,
): { services: Record<string, Record<string, unknown>> } {
  const problems = composeSystemProblems(cfg, file);
  if (problems.length > 0)
    throw new BenchError(
      'E_USAGE',
      `${cfg.file}: ${problems.map((p) => `system.compose${p.path.length ? `.${p.path.join('.')}` : ''}: ${p.message}`).join('; ')}`,
    );
  // The proxy joins the networks its dependents and dependencies are on (the default one when they name none).
  const networks = new Set<string>();
  for (const l of cfg.links)
    for (const s of [l.from, l.service]) for (const n of networkNames(file.services[s]!)) networks.add(n);
  const services: Record<string, Record<string, unknown>> = {
    [PROXY_SERVICE]: {
      image: proxyImage,
      command: ['-host=0.0.0.0'],
      ports: [`127.0.0.1::${PROXY_API_PORT}`],
      ...(networks.size > 0 ? { networks: [...networks] } : {}),
    },
  };
  const entry = (services[cfg.entry.service] ??= {});
  entry.ports = [`127.0.0.1::${cfg.entry.port}`];
  cfg.links.forEach((l, i) => {
    const value = serviceEnvironment(file.services[l.from]!)[l.env]!;
    const from = (services[l.from] ??= {});
    const env = (from.environment ??= {}) as Record<string, string>;
    // Every occurrence: `http://back:9000/x` becomes `http://metabench-faultproxy:21000/x`.
    env[l.env] = value.split(addressOf(l)).join(proxyAddress(i));
  });
  return { services };
}

/** The networks a service joins (the list or map form), none when it uses the project's default. */
function networkNames(def: ServiceDef): string[] {
  const n = def.networks;
  if (Array.isArray(n)) return n.map(String);
  if (n && typeof n === 'object') return Object.keys(n);
  return [];
}

/**
 * The fault proxy's image: METABENCH_TOXIPROXY_IMAGE from the environment, else from the env
 * file (docker/offline.env, which scripts/build-offline-images.sh writes). Throws E_LAB_PREFLIGHT
 * when neither names one.
 */
export function proxyImage(env: Readonly<Record<string, string | undefined>>, envFile?: string): string {
  const fromFile =
    envFile && existsSync(resolve(envFile))
      ? parseEnvFile(readFileSync(resolve(envFile), 'utf8')).METABENCH_TOXIPROXY_IMAGE
      : undefined;
  const image = env.METABENCH_TOXIPROXY_IMAGE || fromFile;
  if (!image)
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      'no image for the fault proxy: set METABENCH_TOXIPROXY_IMAGE or pass --env-file docker/offline.env',
      'scripts/build-offline-images.sh builds the stand-in and writes docker/offline.env',
    );
  return image;
}
