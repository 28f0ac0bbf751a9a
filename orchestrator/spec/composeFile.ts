import { existsSync, readFileSync } from 'node:fs';
import { LineCounter, parseDocument } from 'yaml';
import { BenchError } from '../../foundation/errors.js';

/**
 * The user's compose file as system.compose names it: its services, read once, and what in it
 * makes the declared system impossible (validation names each field; the Docker runtime writes
 * its override from the same reading, orchestrator/lab/engine/composeSystem.ts).
 */

/** The compose service metabench adds to the user's file: the fault proxy. */
export const PROXY_SERVICE = 'metabench-faultproxy';

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

/** A metrics endpoint inside the compose project: the service, the port in its container, the path. */
export interface ComposeMetricsEndpoint {
  readonly service: string;
  readonly port: number;
  readonly path: string;
}

/** The entry, links and metrics endpoint of a compose system, as composeSystemProblems checks them. */
export interface ComposeShape {
  readonly entry: { readonly service: string; readonly port: number };
  readonly links: readonly ComposeLink[];
  readonly metrics?: ComposeMetricsEndpoint | undefined;
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

/** One problem with the system against its compose file: the field (under system:, `compose.entry.service`) and why. */
export interface ComposeProblem {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

/** The dependency's address as the dependent's variable names it: `service:port`. */
export function addressOf(l: Pick<ComposeLink, 'service' | 'port'>): string {
  return `${l.service}:${l.port}`;
}

/**
 * What the compose file makes impossible (empty: none): the entry, every link's service and
 * dependent must be services of the file; each link's variable must be set in the dependent's
 * environment to a value that names `service:port` (that is the address metabench rewrites);
 * the override's own service name must be free; link names unique; the metrics endpoint's
 * service one of the file's.
 */
export function composeSystemProblems(cfg: ComposeShape, file: ComposeFileServices): ComposeProblem[] {
  const names = Object.keys(file.services);
  const declared = `the file's services: ${names.join(', ')}`;
  const out: ComposeProblem[] = [];
  const push = (path: readonly (string | number)[], message: string): void => {
    out.push({ path: ['compose', ...path], message });
  };
  if (!file.services[cfg.entry.service])
    push(['entry', 'service'], `no service "${cfg.entry.service}" (${declared})`);
  if (cfg.metrics && !file.services[cfg.metrics.service])
    out.push({ path: ['metrics', 'service'], message: `no service "${cfg.metrics.service}" (${declared})` });
  if (file.services[PROXY_SERVICE])
    out.push({
      path: ['compose'],
      message: `the file has a service named ${PROXY_SERVICE}, the name of the fault proxy metabench adds: rename it`,
    });
  const seen = new Set<string>();
  cfg.links.forEach((l, i) => {
    if (seen.has(l.name))
      push(['links', i, 'name'], `two links are named "${l.name}": give each its own name`);
    seen.add(l.name);
    for (const k of ['service', 'from'] as const)
      if (!file.services[l[k]]) push(['links', i, k], `no service "${l[k]}" (${declared})`);
    if (l.service === l.from) push(['links', i, 'from'], 'a service does not depend on itself');
    const from = file.services[l.from];
    if (!from) return;
    const env = serviceEnvironment(from);
    const value = env[l.env];
    const at = file.lines[l.from] ? ` (line ${file.lines[l.from]})` : '';
    if (!(l.env in env))
      push(
        ['links', i, 'env'],
        `service ${l.from}${at} sets no ${l.env} in its environment: declare ${l.env}: http://${addressOf(l)} there, so metabench can point it at the fault proxy`,
      );
    else if (value === undefined || !value.includes(addressOf(l)))
      push(
        ['links', i, 'env'],
        `${l.env} of service ${l.from}${at} is ${value === undefined ? 'unset' : `"${value}"`}, which does not name ${addressOf(l)}: metabench rewrites that address to the fault proxy's`,
      );
  });
  return out;
}
