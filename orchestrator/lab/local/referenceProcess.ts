import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchError } from '../../../foundation/errors.js';
import { processTree } from '../proc/procUsage.js';
import { signalAll } from './supervisor.js';
import { pollReady, READY_TIMEOUT_MS } from './ready.js';
import { within } from '../../../foundation/within.js';

/**
 * What the three reference servers share on the local runtime: their files in
 * services/reference/, a temporary directory each, their masters started under a guard
 * that stops them when metabench goes away, a wait for their health URL, and a stop that
 * leaves nothing running.
 */

/** services/reference/ in the repository (this file runs from dist/orchestrator/lab/local/). */
export const REFERENCE_DIR = fileURLToPath(new URL('../../../../services/reference/', import.meta.url));
const GUARD = join(REFERENCE_DIR, 'guard.sh');

/** `{{name}}` fields of a configuration template filled in; a field left unfilled is a bug. */
export function fillTemplate(text: string, fields: Readonly<Record<string, string | number>>): string {
  const out = text.replace(/\{\{(\w+)\}\}/g, (_whole, name: string) => {
    const v = fields[name];
    if (v === undefined) throw new Error(`template field ${name} has no value`);
    return String(v);
  });
  return out;
}

/** A reference template from services/reference/, filled in and written to `dir`. */
export function writeTemplate(
  from: string,
  dir: string,
  name: string,
  fields: Readonly<Record<string, string | number>>,
): string {
  const path = join(dir, name);
  writeFileSync(path, fillTemplate(readFileSync(join(REFERENCE_DIR, from), 'utf8'), fields));
  return path;
}

/**
 * A fresh temporary directory, readable by every user: servers that drop root (php-fpm's
 * pool, nginx's workers) read their scripts and sockets in it.
 */
export function referenceTempDir(kind: string): string {
  const dir = mkdtempSync(join(tmpdir(), `metabench-ref-${kind}-`));
  chmodSync(dir, 0o755);
  return dir;
}

/** Every guarded process this process started and has not stopped: killed on exit. */
const running = new Set<ChildProcess>();
let exitHookSet = false;

/** On any exit of this process that runs JavaScript: SIGKILL to each server's whole tree. */
function killAllOnExit(): void {
  for (const child of running) if (child.pid) signalAll(processTree(child.pid).reverse(), 'SIGKILL');
  running.clear();
}

export type Log = (text: string) => void;

/**
 * Starts `bin args` under the guard (services/reference/guard.sh), whose stdin is a pipe
 * from this process: when this process ends, however it ends, the pipe closes and the
 * guard sends the server SIGTERM. Its output goes to `log` under `[tag]`, and its last
 * lines are kept for the error message should it fail to start.
 */
export function spawnGuarded(
  tag: string,
  bin: string,
  args: readonly string[],
  o: {
    readonly env?: NodeJS.ProcessEnv;
    readonly cwd?: string;
    readonly log: Log;
    /** A temporary directory (referenceTempDir) the guard removes once the server has exited. */
    readonly removeDir?: string;
  },
): { child: ChildProcess; tail: () => string } {
  const env = { ...(o.env ?? process.env) };
  if (o.removeDir) env['METABENCH_GUARD_REMOVE'] = o.removeDir;
  const child = spawn('sh', [GUARD, bin, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
    ...(o.cwd ? { cwd: o.cwd } : {}),
  });
  child.once('error', () => undefined);
  child.stdin?.on('error', () => undefined);
  const lines: string[] = [];
  const each = (d: Buffer): void => {
    for (const line of d.toString().split('\n')) {
      if (!line.trim()) continue;
      o.log(`[${tag}] ${line}\n`);
      lines.push(line);
      if (lines.length > 12) lines.shift();
    }
  };
  child.stdout?.on('data', each);
  child.stderr?.on('data', each);
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (!exitHookSet) {
    process.once('exit', killAllOnExit);
    exitHookSet = true;
  }
  return { child, tail: () => lines.join('\n') };
}

/** A GET that resolves with the body on a 2xx answer within `timeoutMs`, and rejects otherwise. */
export async function httpGet(url: string, timeoutMs: number): Promise<string> {
  const [res, body] = await within(timeoutMs, async (signal) => {
    const r = await fetch(url, { signal });
    return [r, await r.text()] as const;
  });
  if (!res.ok)
    throw new Error(`${url} answered ${res.status}${body ? `: ${body.trim().slice(0, 120)}` : ''}`);
  return body;
}

/**
 * Waits until `url` answers 2xx; a preflight error if a child exits first or the time
 * runs out, with the child's last lines of output.
 */
export async function waitHealthy(
  what: string,
  url: string,
  children: readonly { child: ChildProcess; tail: () => string }[],
): Promise<void> {
  return pollReady(
    `${what} (${url})`,
    () => httpGet(url, 2000),
    () => {
      for (const c of children)
        if (c.child.exitCode !== null || c.child.signalCode !== null)
          throw new BenchError(
            'E_LAB_PREFLIGHT',
            `${what} exited while starting (code ${c.child.exitCode}); its last output:\n${c.tail() || '(none)'}`,
          );
    },
  );
}

/**
 * Whether a TCP socket listens on `host:port` (IPv4), as the kernel lists it in /proc/net/tcp:
 * found without connecting, since a connection would be one of the server's requests
 * (php-fpm counts it in its accepted connections).
 */
export function listening(host: string, port: number, table = '/proc/net/tcp'): boolean {
  const hex = (n: number, width: number) => n.toString(16).toUpperCase().padStart(width, '0');
  // The address as the kernel prints it: the IPv4 bytes in host order (little-endian here), then the port.
  const addr = `${hex(
    host
      .split('.')
      .reverse()
      .reduce((acc, b) => acc * 256 + Number(b), 0),
    8,
  )}:${hex(port, 4)}`;
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return false;
  }
  return text.split('\n').some((line) => {
    const f = line.trim().split(/\s+/);
    return f[1] === addr && f[3] === '0A'; // 0A: LISTEN
  });
}

/**
 * Waits until a server listens on `host:port` (without connecting: see listening); a
 * preflight error if a child exits first or the time runs out. nginx is started only once
 * php-fpm listens: a request it forwarded before that would be a 502 that nginx counted as
 * received and the pool never completed (a health check's, while it waited).
 */
export async function waitListening(
  what: string,
  host: string,
  port: number,
  children: readonly { child: ChildProcess; tail: () => string }[],
): Promise<void> {
  const until = performance.now() + READY_TIMEOUT_MS;
  while (performance.now() < until) {
    for (const c of children)
      if (c.child.exitCode !== null || c.child.signalCode !== null)
        throw new BenchError(
          'E_LAB_PREFLIGHT',
          `${what} exited while starting (code ${c.child.exitCode}); its last output:\n${c.tail() || '(none)'}`,
        );
    if (listening(host, port)) return;
    await sleep(50);
  }
  throw new BenchError(
    'E_LAB_PREFLIGHT',
    `${what} did not listen on ${host}:${port} within ${READY_TIMEOUT_MS / 1000} s`,
  );
}

/**
 * Stops a guarded server: SIGCONT (it may be paused) and SIGTERM to the guard, which
 * passes it on; after `graceMs`, SIGKILL to whatever is left of the tree.
 */
export async function stopGuarded(child: ChildProcess, graceMs = 5000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null || child.signalCode !== null) {
    running.delete(child);
    return;
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const tree = processTree(pid);
  signalAll(tree, 'SIGCONT');
  signalAll([pid], 'SIGTERM');
  const timer = setTimeout(() => signalAll(processTree(pid).reverse(), 'SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  // The guard has waited for its server; a worker that outlived its master is killed here,
  // and waited for, so that the caller sees every process of the server gone.
  const left = tree.filter((p) => p !== pid && isAlive(p));
  signalAll(left, 'SIGKILL');
  const until = performance.now() + 2000;
  while (performance.now() < until && left.some(isAlive)) await sleep(20);
  running.delete(child);
}

/** The process exists and has not ended (a zombie has ended: init reaps it, or in a container may not). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Removes a reference server's temporary directory. */
export function removeDir(dir: string | undefined): void {
  if (dir) rmSync(dir, { recursive: true, force: true });
}
