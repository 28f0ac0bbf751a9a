import type { ForwardedHttpUndo } from '../dockerData.js';
import { engineGone, inEngine, messageOf } from '../engine/undo.js';

/**
 * Runs an HTTP undo to a stack's unpublished fault proxy (lab reset after a killed run): a
 * child process opens the port-forward through the recipe's engine and control container, as
 * the run did (forward.ts), sends the request and closes it. Answers that mean "nothing to undo"
 * (the stack gone, the toxic gone) are said, not thrown.
 */
export function runForwardedHttpUndo(undo: ForwardedHttpUndo): string {
  const where = `${undo.method} http://${undo.host}:${undo.port}${undo.path} (through ${undo.container.slice(0, 12)})`;
  const recipe = { ...undo, forwardModule: new URL('./forward.js', import.meta.url).href };
  const out = inEngine<{ proxy?: number }>(
    recipe,
    `await d.getContainer(r.container).inspect();
        const { forward, execPipe } = await import(r.forwardModule);
        const f = await forward(execPipe(d, r.container, r.host, r.port));
        try {
          const ctl = new AbortController();
          const limit = setTimeout(() => ctl.abort(new Error('no answer within 10 s')), 10000);
          const init = { method: r.method, signal: ctl.signal };
          if (r.body !== undefined) { init.body = JSON.stringify(r.body); init.headers = { 'Content-Type': 'application/json' }; }
          try {
            const res = await fetch('http://' + f.address + r.path, init);
            say({ proxy: res.status, text: await res.text() });
          } finally { clearTimeout(limit); }
        } finally { await f.close(); }`,
    where,
  );
  if (out.error !== undefined) {
    if (engineGone(out.error))
      return `${undo.what}: the Docker engine is gone (the stack with it), nothing to undo`;
    throw new Error(`${where}: ${out.error}`);
  }
  // The engine's answer: the control container is gone, so is the stack and its fault proxy's state.
  if (out.status === 404) return `${undo.what}: the stack's control container is gone, nothing to undo`;
  if (out.status !== undefined) throw new Error(`${where}: HTTP ${out.status} ${messageOf(out.text ?? '')}`);
  const status = out.proxy ?? 0;
  if (status >= 200 && status < 300) return `${undo.what}: ${where} (HTTP ${status})`;
  if (status === 404) return `${undo.what}: already undone (HTTP 404 ${(out.text ?? '').trim()})`;
  throw new Error(`${where}: HTTP ${status} ${(out.text ?? '').trim()}`);
}
