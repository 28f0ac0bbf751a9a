/** An abort listener: a function, or an object with handleEvent (no closure per listener). */
export type AbortListener = (() => void) | { handleEvent(): void };

/**
 * The part of an AbortSignal the clocks, the load generator and its policies use: Node's
 * AbortSignal is one, bench/leanAbort.ts's lean signal another.
 */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}
