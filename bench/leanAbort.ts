import type { AbortListener, AbortSignalLike } from '../foundation/abortSignal.js';
import type { NewController } from './abort.js';

/**
 * A lean AbortController: the subset of the DOM's that bench/ uses
 * (`signal.aborted`, `addEventListener('abort', fn, { once })`, `removeEventListener`,
 * `abort()`), with the same semantics for it: listeners run once, in the order added,
 * a listener added twice runs once, one removed during the dispatch does not run, and
 * one added to an already aborted signal never runs; a listener may be a function or an
 * object with handleEvent (no closure per listener). Node's AbortController costs
 * several microseconds to create (an EventTarget with its maps); an origin makes two or
 * more, so in the simulator this is most of what an origin would otherwise cost, and the
 * real-time runs use it too (our HTTP transport needs nothing more of a signal).
 * Not an EventTarget: bench/ checks before handing a signal to node:events.
 */

const REASON = Object.freeze({ name: 'AbortError', message: 'This operation was aborted' });

function call(f: AbortListener): void {
  if (typeof f === 'function') f();
  else f.handleEvent();
}

class LeanSignal implements AbortSignalLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: AbortListener[] | null = null;

  addEventListener(type: string, fn: AbortListener | null): void {
    if (type !== 'abort' || fn === null || this.aborted) return;
    const l = (this.listeners ??= []);
    if (l.length > 0 && l.includes(fn)) return;
    l.push(fn);
  }

  removeEventListener(type: string, fn: AbortListener): void {
    if (type !== 'abort') return;
    const l = this.listeners;
    if (!l) return;
    const i = l.indexOf(fn);
    if (i >= 0) l.splice(i, 1);
  }

  /** Called by the controller. */
  fire(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const l = this.listeners;
    this.listeners = null;
    if (!l) return;
    if (l.length === 1) {
      call(l[0]!);
      return;
    }
    // Kept reachable during the dispatch, so a listener removed by an earlier one does not run.
    this.listeners = l;
    for (const f of l.slice()) if (l.includes(f)) call(f);
    this.listeners = null;
  }
}

class LeanAbortController {
  readonly signal = new LeanSignal();

  abort(reason: unknown = REASON): void {
    this.signal.fire(reason);
  }
}

/** The maker bench/ takes. */
export const leanController: NewController = () => new LeanAbortController();
