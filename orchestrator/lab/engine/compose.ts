import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { BenchError } from '../../../foundation/errors.js';
import { engineAddress, engineEnv } from './engine.js';
import type { ComposeOptions } from '../dockerData.js';

export type { ComposeOptions } from '../dockerData.js';

/** The compose file shipped at the package's top level. */
export const COMPOSE_FILE = fileURLToPath(new URL('../../../../docker-compose.yml', import.meta.url));
export const DEFAULT_PROJECT = 'metabench';

/**
 * docker-compose.yml (merge keys resolved) and the folder its relative paths start from: the
 * one description of the lab that the swarm stack and the Kubernetes manifests are made from.
 */
export function readCompose(file: string): { doc: Record<string, unknown>; dir: string } {
  return {
    doc: parse(readFileSync(file, 'utf8'), { merge: true }) as Record<string, unknown>,
    dir: dirname(resolve(file)),
  };
}

/** The lab's services by role; llm-stub sits under the compose profile "llm". */
export const CORE_SERVICES = ['api', 'redis', 'postgres', 'toxiproxy'] as const;
export const OBSERVE_SERVICES = ['prometheus'] as const;
export const GRAFANA_SERVICES = ['grafana', 'grafana-image-renderer'] as const;

/** How compose is invoked here: `docker compose` (v2) or `docker-compose` (v1). */
export interface ComposeCli {
  readonly bin: string;
  readonly prefix: readonly string[];
  readonly version: 'v2' | 'v1';
}

let detected: ComposeCli | undefined;

/** Finds `docker compose` (v2), else `docker-compose` (v1); throws E_LAB_PREFLIGHT when neither runs. */
export function composeCli(): ComposeCli {
  if (detected) return detected;
  const probes: ComposeCli[] = [
    { bin: 'docker', prefix: ['compose'], version: 'v2' },
    { bin: 'docker-compose', prefix: [], version: 'v1' },
  ];
  for (const p of probes) {
    const r = spawnSync(p.bin, [...p.prefix, 'version'], { stdio: 'ignore', timeout: 20_000 });
    if (r.status === 0) return (detected = p);
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    'neither `docker compose` (v2) nor `docker-compose` (v1) is installed',
    'install Docker Compose (Debian: apt-get install docker-compose)',
  );
}

/** The compose arguments before the subcommand: file, project, env file. */
export function composeArgs(o: ComposeOptions): string[] {
  const file = o.file ?? COMPOSE_FILE;
  const args = ['-f', file, ...(o.overrides ?? []).flatMap((f) => ['-f', f]), '-p', o.project];
  if (o.envFile !== undefined) {
    const env = resolve(o.envFile);
    if (!existsSync(env))
      throw new BenchError(
        'E_USAGE',
        `--env-file ${o.envFile}: no such file`,
        'scripts/build-offline-images.sh writes docker/offline.env',
      );
    args.push('--env-file', env);
  }
  return args;
}

/**
 * Runs one compose command; resolves with its output, rejects with E_LAB carrying the
 * end of its stderr. `env` adds variables (METABENCH_API_FLAGS) to the environment.
 */
export function runCompose(
  o: ComposeOptions,
  args: readonly string[],
  opts: { env?: Record<string, string>; inherit?: boolean; timeoutMs?: number } = {},
): Promise<string> {
  const cli = composeCli();
  const full = [...cli.prefix, ...composeArgs(o), ...args];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cli.bin, full, {
      // Compose v1 gives up on a slow engine after 60 s (creating a container on the vfs driver copies its image).
      // The engine metabench talks to (a context's endpoint included), for compose too.
      env: { COMPOSE_HTTP_TIMEOUT: '600', ...composeEngineEnv(), ...opts.env },
      stdio: ['ignore', opts.inherit ? 'inherit' : 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => {
      err += d.toString();
      if (opts.inherit) process.stderr.write(d);
    });
    const timer = setTimeout(() => child.kill('SIGTERM'), opts.timeoutMs ?? 600_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new BenchError('E_LAB_PREFLIGHT', `cannot run ${cli.bin}: ${e.message}`));
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolvePromise(out);
      else
        reject(
          new BenchError(
            'E_LAB_PREFLIGHT',
            // Its whole error output, uncut (already on the terminal when inherited: then its end).
            `${[cli.bin, ...cli.prefix].join(' ')} ${args.join(' ')} failed (exit ${code}): ${opts.inherit ? lastLines(err, 6) : lastLines(err, Infinity)}`,
          ),
        );
    });
  });
}

/**
 * process.env, with DOCKER_HOST (and its TLS settings) set to the endpoint when the engine was
 * found through a context: compose v1 does not read Docker contexts.
 */
function composeEngineEnv(): NodeJS.ProcessEnv {
  const addr = engineAddress();
  if (!/^(context |DOCKER_CONTEXT=)/.test(addr.from ?? '')) return process.env;
  const env = { ...process.env };
  delete env.DOCKER_CONTEXT;
  return { ...env, ...engineEnv(addr) };
}

function lastLines(text: string, n: number): string {
  // Compose v1 ends its progress lines with a carriage return: one line each, not overwritten.
  const lines = text
    .split(/[\r\n]+/)
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.slice(-n).join(' | ') || 'no message';
}
