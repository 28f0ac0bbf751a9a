import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BenchError } from '../../../foundation/errors.js';
import type { EngineAddress } from '../dockerData.js';
import type { UndoRecipe } from '../undoRecipe.js';
import { parseEnvFile } from './images.js';
import {
  addressOf,
  composeSystemProblems,
  PROXY_SERVICE,
  serviceEnvironment,
  type ComposeFileServices,
  type ComposeLink,
  type ComposeMetricsEndpoint,
} from '../../spec/composeFile.js';

export {
  PROXY_SERVICE,
  composeSystemProblems,
  readComposeServices,
  serviceEnvironment,
  type ComposeFileServices,
  type ComposeLink,
  type ComposeMetricsEndpoint,
} from '../../spec/composeFile.js';

/**
 * A system under test given as the user's own compose file (system.compose): metabench runs it
 * as a compose project with a generated override (`-f user.yml -f override.json`, merged by
 * compose v1 and v2 alike, as the replica override is) that adds a fault proxy service with one
 * proxy per declared link, points each dependent at its proxy by rewriting the environment
 * variable it reads the dependency's address from, and publishes the entry's port and the
 * proxy's API on 127.0.0.1 only, each on a port the engine picks (so none can clash).
 */

/** The proxy's API port inside its container (Toxiproxy's). */
export const PROXY_API_PORT = 8474;
/** Link i listens in the proxy's container on LINK_PORT_BASE + i. */
export const LINK_PORT_BASE = 21000;

export interface ComposeSystemConfig {
  /** The user's compose file. */
  readonly file: string;
  readonly project: string;
  /** The service the load goes to, the port it listens on in its container, and its health path. */
  readonly entry: { readonly service: string; readonly port: number; readonly health?: string | undefined };
  readonly links: readonly ComposeLink[];
  /** The metrics endpoint inside the project (system.metrics' service, port and path), published like the entry. */
  readonly metrics?: ComposeMetricsEndpoint | undefined;
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
      `${cfg.file}: ${problems.map((p) => `system.${p.path.join('.')}: ${p.message}`).join('; ')}`,
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
  // The metrics endpoint's port too (beside the entry's when it is the same service), scraped from the host.
  if (cfg.metrics) {
    const m = (services[cfg.metrics.service] ??= {});
    const ports = (m.ports ??= []) as string[];
    const port = `127.0.0.1::${cfg.metrics.port}`;
    if (!ports.includes(port)) ports.push(port);
  }
  cfg.links.forEach((l, i) => {
    const value = serviceEnvironment(file.services[l.from]!)[l.env]!;
    const from = (services[l.from] ??= {});
    const env = (from.environment ??= {}) as Record<string, string>;
    // Every occurrence: `http://back:9000/x` becomes `http://metabench-faultproxy:21000/x`.
    env[l.env] = value.split(addressOf(l)).join(proxyAddress(i));
  });
  return { services };
}

/**
 * The journal's undo of bringing the project up (recorded before `compose up`, cleared after a
 * normal down): the project taken down through the Engine API by its label, then the override's
 * temporary directory removed. `lab reset`, or the next command, runs it after a crash.
 */
export function composeDownRecipe(project: string, engine: EngineAddress, overrideDir: string): UndoRecipe {
  const what = `compose project ${project}`;
  return {
    kind: 'steps',
    what: `take ${what} down`,
    steps: [
      { kind: 'compose-down', project, engine, what },
      { kind: 'remove', path: overrideDir, what: 'its compose override' },
    ],
  };
}

/** The networks a service joins (the list or map form), none when it uses the project's default. */
function networkNames(def: Readonly<Record<string, unknown>>): string[] {
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
