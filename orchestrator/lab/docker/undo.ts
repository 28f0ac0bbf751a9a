import { spawnSync } from 'node:child_process';
import type { EngineAddress } from './engine.js';

/** A fault-journal recipe that undoes a Docker action through the Engine API. */
export interface DockerUndo {
  readonly kind: 'docker';
  readonly action: 'unpause' | 'start';
  readonly container: string;
  readonly engine: EngineAddress;
  readonly what: string;
}

/**
 * Runs the recipe synchronously (journal recovery runs from sync code before any
 * command): a child node process sends POST /containers/{id}/{action} over the engine's
 * socket. Answers that mean "nothing to undo" (gone, already running, not paused) are
 * said, not thrown.
 */
export function runDockerUndo(undo: DockerUndo): string {
  const script = `
    const r = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    const http = require('node:http');
    const path = '/containers/' + encodeURIComponent(r.container) + '/' + r.action;
    const target = r.engine.socketPath ? { socketPath: r.engine.socketPath } : (() => { const u = new URL(r.engine.url); return { host: u.hostname, port: u.port || 2375 }; })();
    const req = http.request({ ...target, method: 'POST', path, timeout: 20000 }, (res) => {
      let text = ''; res.on('data', (d) => (text += d)); res.on('end', () => process.stdout.write(JSON.stringify({ status: res.statusCode, text })));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (e) => process.stdout.write(JSON.stringify({ error: e.code || e.message })));
    req.end();`;
  const child = spawnSync(process.execPath, ['-e', script], {
    input: JSON.stringify(undo),
    encoding: 'utf8',
    timeout: 30_000,
  });
  let out: { status?: number; text?: string; error?: string };
  try {
    out = JSON.parse(child.stdout) as typeof out;
  } catch {
    throw new Error(`docker ${undo.action} ${undo.container} did not complete (${child.stderr.trim()})`);
  }
  if (out.error !== undefined) {
    if (out.error === 'ENOENT' || out.error === 'ECONNREFUSED')
      return `${undo.what}: the Docker engine is gone (its containers with it), nothing to undo`;
    throw new Error(`docker ${undo.action} ${undo.container}: ${out.error}`);
  }
  const status = out.status ?? 0;
  const message = messageOf(out.text ?? '');
  if (status === 204) return `${undo.what}: docker ${undo.action} (HTTP 204)`;
  if (status === 304) return `${undo.what}: already running (HTTP 304)`;
  if (status === 404) return `${undo.what}: the container is gone, nothing to undo`;
  // 409 "Container … is not paused": resumed already.
  if (status === 409 && undo.action === 'unpause') return `${undo.what}: already resumed (${message})`;
  throw new Error(`docker ${undo.action} ${undo.container}: HTTP ${status} ${message}`);
}

function messageOf(text: string): string {
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text).trim();
  } catch {
    return text.trim();
  }
}
