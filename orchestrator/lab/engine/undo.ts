import { spawnSync } from 'node:child_process';
import type { DockerUndo } from '../dockerData.js';

export type { DockerUndo } from '../dockerData.js';

/**
 * Runs the recipe synchronously (journal recovery runs from sync code before any
 * command): a child node process sends POST /containers/{id}/{action} to the recipe's engine. Answers that mean "nothing to undo" (gone, already running, not paused) are
 * said, not thrown.
 */
export function runDockerUndo(undo: DockerUndo): string {
  // Through dockerode, as the lab itself talks to the engine (unix, tcp with TLS, ssh alike).
  const script = `
    const r = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    const say = (o) => process.stdout.write(JSON.stringify(o));
    import(r.module).then(async ({ dockerClient }) => {
      try {
        await dockerClient(r.engine).getContainer(r.container)[r.action](r.body);
        say({ status: 204 });
      } catch (e) {
        if (typeof e.statusCode === 'number') say({ status: e.statusCode, text: JSON.stringify(e.json ?? { message: e.reason ?? e.message }) });
        else say({ error: e.code || e.message });
      }
    }, (e) => say({ error: e.message }));`;
  const child = spawnSync(process.execPath, ['-e', script], {
    input: JSON.stringify({ ...undo, module: new URL('./engine.js', import.meta.url).href }),
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
