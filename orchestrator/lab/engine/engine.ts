import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { Agent as HttpsAgent } from 'node:https';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type Docker from 'dockerode';
import type DockerClient from 'dockerode';
import { BenchError } from '../../../foundation/errors.js';
import type { EngineAddress, EngineTls } from '../dockerData.js';
import { sshDialAgent } from './sshDial.js';

export type { EngineAddress, EngineTls } from '../dockerData.js';

export const DEFAULT_SOCKET = '/var/run/docker.sock';

/**
 * The engine the docker CLI would use, in its order: DOCKER_CONTEXT, else DOCKER_HOST (unix://,
 * tcp:// with DOCKER_TLS_VERIFY / DOCKER_TLS and DOCKER_CERT_PATH, ssh://), else the current
 * context of config.json (in DOCKER_CONFIG or ~/.docker), else the default socket. A context's
 * endpoint is in contexts/meta/<sha256 of its name>/meta.json and its TLS files in
 * contexts/tls/<sha256 of its name>/docker/. Throws E_USAGE saying what it read when a setting
 * cannot be used.
 */
export function engineAddress(env: NodeJS.ProcessEnv = process.env, home = homedir()): EngineAddress {
  const configDir = env.DOCKER_CONFIG || join(home, '.docker');
  if (env.DOCKER_CONTEXT)
    return contextAddress(env.DOCKER_CONTEXT, configDir, `DOCKER_CONTEXT=${env.DOCKER_CONTEXT}`);
  if (env.DOCKER_HOST) {
    const tlsVerify = !!env.DOCKER_TLS_VERIFY;
    const tls = tlsVerify || !!env.DOCKER_TLS;
    const certDir = env.DOCKER_CERT_PATH || configDir;
    return parseHost(
      env.DOCKER_HOST,
      `DOCKER_HOST=${env.DOCKER_HOST}`,
      tls ? certFiles(certDir, tlsVerify) : undefined,
    );
  }
  const configFile = join(configDir, 'config.json');
  let current: string | undefined;
  if (existsSync(configFile)) {
    try {
      const cfg = JSON.parse(readFileSync(configFile, 'utf8')) as { currentContext?: unknown };
      if (typeof cfg.currentContext === 'string' && cfg.currentContext) current = cfg.currentContext;
    } catch (err) {
      throw new BenchError('E_USAGE', `${configFile}: not JSON (${(err as Error).message})`);
    }
  }
  if (current && current !== 'default')
    return contextAddress(current, configDir, `context "${current}" (currentContext of ${configFile})`);
  return {
    socketPath: DEFAULT_SOCKET,
    from: `the default socket (DOCKER_HOST and DOCKER_CONTEXT unset, ${current ? 'context "default"' : 'no currentContext'} in ${configFile})`,
  };
}

function contextAddress(name: string, configDir: string, from: string): EngineAddress {
  if (name === 'default') return { socketPath: DEFAULT_SOCKET, from: `${from}: the default socket` };
  const id = createHash('sha256').update(name).digest('hex');
  const metaFile = join(configDir, 'contexts', 'meta', id, 'meta.json');
  let meta: { Endpoints?: { docker?: { Host?: unknown; SkipTLSVerify?: unknown } } };
  try {
    meta = JSON.parse(readFileSync(metaFile, 'utf8')) as typeof meta;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new BenchError(
      'E_USAGE',
      `${from}: cannot read its endpoint from ${metaFile} (${e.code ?? e.message})`,
      '`docker context ls` lists the contexts; `docker context use default` goes back to the default socket',
    );
  }
  const host = meta.Endpoints?.docker?.Host;
  if (typeof host !== 'string' || !host)
    throw new BenchError('E_USAGE', `${from}: ${metaFile} has no Endpoints.docker.Host`);
  const tlsDir = join(configDir, 'contexts', 'tls', id, 'docker');
  const tls = existsSync(tlsDir)
    ? certFiles(tlsDir, meta.Endpoints?.docker?.SkipTLSVerify !== true)
    : undefined;
  return parseHost(host, `${from}, endpoint ${host}`, tls);
}

/** The PEM files of a certificate folder that exist (ca.pem, cert.pem, key.pem). */
function certFiles(dir: string, verify: boolean): EngineTls {
  const file = (n: string): { [k: string]: string } =>
    existsSync(join(dir, `${n}.pem`)) ? { [n]: join(dir, `${n}.pem`) } : {};
  return { ...file('ca'), ...file('cert'), ...file('key'), verify };
}

function parseHost(host: string, from: string, tls: EngineTls | undefined): EngineAddress {
  if (host.startsWith('unix://')) return { socketPath: host.slice('unix://'.length) || DEFAULT_SOCKET, from };
  let u: URL;
  try {
    u = new URL(host);
  } catch {
    u = new URL('invalid:');
  }
  if (u.protocol === 'tcp:' && u.hostname) {
    const port = u.port || (tls ? '2376' : '2375');
    return tls
      ? { url: `https://${u.hostname}:${port}`, tls, from }
      : { url: `http://${u.hostname}:${port}`, from };
  }
  if (u.protocol === 'ssh:' && u.hostname)
    return { ssh: `ssh://${u.username ? `${u.username}@` : ''}${u.host}`, from };
  throw new BenchError(
    'E_USAGE',
    `${from}: not an engine address metabench can use (unix:///path, tcp://host:port or ssh://[user@]host[:port])`,
  );
}

/** The address as the docker CLI writes it (for messages and for DOCKER_HOST). */
export function engineUrl(addr: EngineAddress): string {
  if ('socketPath' in addr) return `unix://${addr.socketPath}`;
  if ('ssh' in addr) return addr.ssh;
  return addr.url.replace(/^https?:/, 'tcp:');
}

/** The environment that points the docker and compose CLIs at the same engine. */
export function engineEnv(addr: EngineAddress): Record<string, string> {
  const env: Record<string, string> = { DOCKER_HOST: engineUrl(addr) };
  if ('url' in addr && addr.tls) {
    if (addr.tls.verify) env.DOCKER_TLS_VERIFY = '1';
    else env.DOCKER_TLS = '1';
    if (addr.tls.ca) env.DOCKER_CERT_PATH = dirname(addr.tls.ca);
  }
  return env;
}

// dockerode (a CommonJS module) is required on first use: it and ssh2 (docker-modem's) take about 0.2 s to
// load, which every command paid when it was imported up front, Docker or not.
const require = createRequire(import.meta.url);
let DockerClass: typeof DockerClient | undefined;

export function dockerClient(addr: EngineAddress = engineAddress()): Docker {
  const Docker: typeof DockerClient = (DockerClass ??= require('dockerode') as typeof DockerClient);
  if ('socketPath' in addr) return new Docker({ socketPath: addr.socketPath });
  // The docker CLI's own connection (sshDial.ts): the system ssh with its config, keys and agent.
  // The host name is a placeholder: every connection is made by the agent.
  if ('ssh' in addr)
    return new Docker({
      protocol: 'http',
      host: 'docker',
      port: 2375,
      agent: sshDialAgent(addr.ssh),
    } as Docker.DockerOptions);
  const u = new URL(addr.url);
  if (!addr.tls) return new Docker({ host: u.hostname, port: Number(u.port || 2375), protocol: 'http' });
  const read = (f: string | undefined): Buffer | undefined => (f ? readFileSync(f) : undefined);
  const pem = { ca: read(addr.tls.ca), cert: read(addr.tls.cert), key: read(addr.tls.key) };
  return new Docker({
    host: u.hostname,
    port: Number(u.port || 2376),
    protocol: 'https',
    ...pem,
    agent: new HttpsAgent({ ...pem, rejectUnauthorized: addr.tls.verify }),
  } as Docker.DockerOptions);
}

/** Resolves when the engine answers; throws E_LAB_PREFLIGHT saying where it looked and why it does not. */
export async function pingEngine(docker: Docker, addr: EngineAddress = engineAddress()): Promise<void> {
  try {
    await docker.ping();
  } catch (err) {
    throw new BenchError(
      'E_LAB_PREFLIGHT',
      `the Docker engine does not answer at ${engineUrl(addr)}, from ${addr.from ?? 'the given address'} (${(err as Error).message})`,
      'start Docker (dockerd), or point DOCKER_HOST or DOCKER_CONTEXT (`docker context use NAME`) at a running engine',
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
  /** Container port ("8080/tcp") → published host address ("127.0.0.1:8080"), while it runs. */
  readonly ports: Readonly<Record<string, string>>;
  /** Every address it listens on now, as the engine bound it ("0.0.0.0:8080", "[::]:8080"): what `lab status` shows. */
  readonly listening: readonly string[];
  /** The host addresses it is bound to publish ("127.0.0.1:8080"), in any state. */
  readonly bindings: readonly string[];
  readonly image: string;
  /** How often the engine restarted it (its restart policy), and the last exit code. */
  readonly restartCount: number;
  readonly exitCode: number;
}

/** The project's containers (any state), found by their compose labels, one per service. */
export async function projectContainers(docker: Docker, project: string): Promise<ServiceContainer[]> {
  const list = await docker.listContainers({
    all: true,
    filters: { label: [`${PROJECT_LABEL}=${project}`] },
  });
  const out: ServiceContainer[] = [];
  for (const c of list) {
    // A container listed, then removed before its inspect (compose recreating it): gone, so not in the project.
    const i = await inspectContainer(docker, c.Id).catch((err: { statusCode?: number }) => {
      if (err.statusCode === 404) return undefined;
      throw err;
    });
    if (i) out.push(i);
  }
  return out.sort((a, b) => a.service.localeCompare(b.service));
}

export async function inspectContainer(docker: Docker, id: string): Promise<ServiceContainer> {
  const i = await docker.getContainer(id).inspect();
  const ports: Record<string, string> = {};
  const listening: string[] = [];
  for (const [port, binds] of Object.entries(i.NetworkSettings.Ports ?? {})) {
    const b = binds?.[0];
    if (b) ports[port] = `${b.HostIp || '127.0.0.1'}:${b.HostPort}`;
    for (const x of binds ?? [])
      listening.push(`${x.HostIp.includes(':') ? `[${x.HostIp}]` : x.HostIp || '0.0.0.0'}:${x.HostPort}`);
  }
  const bindings: string[] = [];
  for (const binds of Object.values(i.HostConfig.PortBindings ?? {}) as (
    { HostIp?: string; HostPort?: string }[] | null
  )[])
    for (const b of binds ?? []) if (b.HostPort) bindings.push(`${b.HostIp || '127.0.0.1'}:${b.HostPort}`);
  return {
    id: i.Id,
    name: i.Name.replace(/^\//, ''),
    service: i.Config.Labels?.[SERVICE_LABEL] ?? '',
    state: i.State.Status,
    health: i.State.Health?.Status,
    pid: i.State.Pid,
    ports,
    listening,
    bindings,
    image: i.Config.Image,
    restartCount: i.RestartCount ?? 0,
    exitCode: i.State.ExitCode ?? 0,
  };
}

/** The container once it is no longer running (up to 5 s), or as it is then. */
async function nextExit(docker: Docker, id: string, c: ServiceContainer): Promise<ServiceContainer> {
  const until = performance.now() + 5000;
  while (c.state === 'running' && performance.now() < until) {
    await new Promise((r) => setTimeout(r, 50));
    c = await inspectContainer(docker, id);
  }
  return c;
}

/**
 * Waits until the container runs and, when it has a healthcheck, is healthy; throws
 * E_LAB_PREFLIGHT naming the service when it exits, restarts (a restart policy hides an exit
 * behind a restart loop) or the timeout passes, with the end of its log.
 */
export async function waitHealthy(docker: Docker, id: string, timeoutMs = 90_000): Promise<ServiceContainer> {
  const until = performance.now() + timeoutMs;
  let c = await inspectContainer(docker, id);
  const restarts = c.restartCount;
  while (performance.now() < until) {
    // Restarted and running again: the engine shows the new run's exit code (0) until it
    // exits again, so wait (briefly) for the exit whose code says why.
    if (c.state === 'running' && c.restartCount > restarts) c = await nextExit(docker, id, c);
    if (c.state === 'exited' || c.state === 'dead' || c.state === 'restarting' || c.restartCount > restarts)
      throw new BenchError(
        'E_LAB_PREFLIGHT',
        `${c.service} (container ${c.name}) ${c.state === 'exited' || c.state === 'dead' ? 'exited' : 'exited and is restarting'} ${c.state === 'running' ? `(restarted ${c.restartCount - restarts} times)` : `with code ${c.exitCode}`} while starting${await logTail(docker, id)}`,
        `see \`docker logs ${c.name}\``,
      );
    if (c.state === 'running' && (c.health === undefined || c.health === 'healthy')) return c;
    await new Promise((r) => setTimeout(r, 250));
    c = await inspectContainer(docker, id);
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    `${c.service} (container ${c.name}) is ${c.state}${c.health ? ` and ${c.health}` : ''} after ${timeoutMs / 1000} s${await logTail(docker, id)}`,
    `see \`docker logs ${c.name}\``,
  );
}

/** ": <the last lines of the container's log>", or "" when it has none or they cannot be read. */
async function logTail(docker: Docker, id: string, lines = 3): Promise<string> {
  try {
    const buf = (await docker.getContainer(id).logs({ stdout: true, stderr: true, tail: lines })) as Buffer;
    const text = demuxLog(buf).trim().split('\n').filter(Boolean).join(' | ');
    return text ? `: ${text}` : '';
  } catch {
    return '';
  }
}

/** The text of a non-TTY container's log stream (8-byte frame headers stripped). */
export function demuxLog(buf: Buffer): string {
  let out = '';
  let i = 0;
  while (i + 8 <= buf.length && (buf[i] === 1 || buf[i] === 2) && buf[i + 1] === 0) {
    const n = buf.readUInt32BE(i + 4);
    out += buf.subarray(i + 8, i + 8 + n).toString();
    i += 8 + n;
  }
  return i === 0 ? buf.toString() : out;
}
