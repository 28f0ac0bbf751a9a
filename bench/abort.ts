import type { AbortSignalLike } from '../foundation/abortSignal.js';

/**
 * Where bench/ gets its AbortControllers. The policies and the driver cancel what runs
 * below them through AbortSignals, using only `aborted`, `addEventListener('abort', fn,
 * { once })`, `removeEventListener` and `abort()`. Node's AbortController is the default;
 * the runs (lab and simulation alike) inject a lean implementation of that subset
 * (bench/leanAbort.ts), because creating Node's costs several microseconds, a quarter of
 * a simulated origin's CPU. The types say so: a controller here is a BenchController, its
 * signal an AbortSignalLike, which Node's are too.
 */
export interface BenchController {
  readonly signal: AbortSignalLike;
  abort(reason?: unknown): void;
}

export type NewController = () => BenchController;

export const nodeController: NewController = () => new AbortController();

/** Whether `s` is a real EventTarget (Node's AbortSignal), e.g. before node:events' setMaxListeners. */
export function isEventTarget(s: unknown): s is EventTarget {
  return s instanceof EventTarget;
}
