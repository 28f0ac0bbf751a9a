import { spawnSync } from 'node:child_process';
import type { ComposeDownUndo, DockerUndo, EngineAddress } from '../dockerData.js';
import { removeNetem } from './netemHost.js';

export type { ComposeDownUndo, DockerUndo } from '../dockerData.js';

/**
 * The journal's Docker recipes run synchronously (journal recovery runs from sync code before
 * any command): a child node process talks to the recipe's engine through dockerode, as the lab
 * itself does (unix, tcp with TLS, ssh alike). `body` is the child's async code, with `d` the
 * engine's client, `r` the recipe and `say` its answer; an Engine API error is answered as
 * `{ status, text }`, any other as `{ error }`.
 */
export function inEngine<T extends object>(
  recipe: { readonly engine: EngineAddress },
  body: string,
  what: string,
): T & { status?: number; text?: string; error?: string } {
  const script = `
    const r = JSON.parse(require('node:fs').readFileSync(0, 'utf8'));
    const say = (o) => process.stdout.write(JSON.stringify(o));
    import(r.module).then(async ({ dockerClient }) => {
      try {
        const d = dockerClient(r.engine);
        ${body}
      } catch (e) {
        if (typeof e.statusCode === 'number') say({ status: e.statusCode, text: JSON.stringify(e.json ?? { message: e.reason ?? e.message }) });
        else say({ error: e.code || e.message });
      }
    }, (e) => say({ error: e.message }));`;
  const child = spawnSync(process.execPath, ['-e', script], {
    input: JSON.stringify({ ...recipe, module: new URL('./engine.js', import.meta.url).href }),
    encoding: 'utf8',
    timeout: 60_000,
  });
  try {
    return JSON.parse(child.stdout) as T;
  } catch {
    throw new Error(`${what} did not complete (${child.error?.message ?? child.stderr.trim()})`);
  }
}

/** The engine's socket or address is gone: so are its containers, and there is nothing to undo. */
export const engineGone = (error: string): boolean => error === 'ENOENT' || error === 'ECONNREFUSED';

/**
 * Sends POST /containers/{id}/{action} to the recipe's engine. Answers that mean "nothing to
 * undo" (gone, already running, not paused) are said, not thrown.
 */
export function runDockerUndo(undo: DockerUndo): string {
  if (undo.action === 'netem-del') return runNetemUndo(undo);
  const out = inEngine(
    undo,
    undo.action === 'uncap'
      ? `const n = (await d.info()).NCPU; await d.getContainer(r.container).update({ NanoCpus: n * 1e9 }); say({ status: 204 });`
      : `await d.getContainer(r.container)[r.action](); say({ status: 204 });`,
    `docker ${undo.action} ${undo.container}`,
  );
  if (out.error !== undefined) {
    if (engineGone(out.error))
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

/** Takes the netem qdisc off the recipe's container: its process found through the engine now, the qdisc deleted from this host. */
function runNetemUndo(undo: DockerUndo): string {
  const out = inEngine<{ pid?: number; name?: string }>(
    undo,
    `const i = await d.getContainer(r.container).inspect(); say({ status: 200, pid: i.State.Pid, name: i.Name });`,
    `docker inspect ${undo.container}`,
  );
  if (out.error !== undefined) {
    if (engineGone(out.error))
      return `${undo.what}: the Docker engine is gone (its containers with it), nothing to undo`;
    throw new Error(`docker inspect ${undo.container}: ${out.error}`);
  }
  if (out.status === 404) return `${undo.what}: the container is gone, nothing to undo`;
  if (out.status !== 200)
    throw new Error(`docker inspect ${undo.container}: HTTP ${out.status} ${messageOf(out.text ?? '')}`);
  const said = removeNetem({
    id: undo.container,
    name: (out.name ?? undo.container).replace(/^\//, ''),
    pid: out.pid ?? 0,
  });
  return `${undo.what}: ${said}`;
}

/**
 * Removes a compose project as `compose down -v --remove-orphans` would, by its label alone:
 * its containers (forced, a paused one included, with their anonymous volumes), then its
 * networks and its named volumes. A project already gone is said, not thrown.
 */
export function runComposeDown(undo: ComposeDownUndo): string {
  const out = inEngine<{ containers?: number; networks?: number; volumes?: number }>(
    undo,
    `const filters = JSON.stringify({ label: ['com.docker.compose.project=' + r.project] });
        const cs = await d.listContainers({ all: true, filters });
        for (const c of cs) await d.getContainer(c.Id).remove({ force: true, v: true });
        const ns = await d.listNetworks({ filters });
        for (const n of ns) await d.getNetwork(n.Id).remove();
        const vs = (await d.listVolumes({ filters })).Volumes ?? [];
        for (const v of vs) await d.getVolume(v.Name).remove();
        say({ containers: cs.length, networks: ns.length, volumes: vs.length });`,
    `compose down of project ${undo.project}`,
  );
  if (out.error !== undefined) {
    if (engineGone(out.error))
      return `${undo.what}: the Docker engine is gone (the project with it), nothing to undo`;
    throw new Error(`compose down of project ${undo.project}: ${out.error}`);
  }
  if (out.status !== undefined)
    throw new Error(
      `compose down of project ${undo.project}: HTTP ${out.status} ${messageOf(out.text ?? '')}`,
    );
  const n = (k: number | undefined, what: string): string => `${k ?? 0} ${what}${k === 1 ? '' : 's'}`;
  const removed = `${n(out.containers, 'container')}, ${n(out.networks, 'network')}, ${n(out.volumes, 'volume')}`;
  return out.containers || out.networks || out.volumes
    ? `${undo.what}: project ${undo.project} removed (${removed})`
    : `${undo.what}: project ${undo.project} is already gone, nothing to undo`;
}

export function messageOf(text: string): string {
  try {
    return String((JSON.parse(text) as { message?: unknown }).message ?? text).trim();
  } catch {
    return text.trim();
  }
}
