import type { Rng } from '../../foundation/rng.js';
import { zipfSampler } from './zipf.js';

/** How keys are drawn for a request class: uniform over `keys`, or Zipf with `exponent`. */
export type KeyDist =
  | { readonly dist: 'uniform'; readonly keys: number }
  | { readonly dist: 'zipf'; readonly keys: number; readonly exponent: number };

/** One kind of request in the workload mix. */
export interface RequestClass {
  readonly name: string;
  /** Fraction of origins of this class; the shares of a mix sum to 1. */
  readonly share: number;
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  readonly path: string;
  /** Size of the request body in bytes (0: none). */
  readonly bodyBytes: number;
  readonly key?: KeyDist;
  /** A cost class the api knows (its work distribution), sent as ?cost=. */
  readonly cost?: string;
  /** A share of this class's streamed answers the user cancels after `afterTokens` tokens. */
  readonly cancel?: { readonly share: number; readonly afterTokens: number };
}

/** What one origin asks for: its class, and the request line and body the transport sends. */
export interface RequestShape {
  readonly cls: number;
  readonly method: RequestClass['method'];
  /** Path with query (?key=, ?cost=). */
  readonly path: string;
  readonly body: Buffer | undefined;
  readonly key: number | undefined;
  /** The client cancels this origin's stream after this many tokens (a user who stops reading). */
  readonly cancelAfterTokens?: number;
}

export const DEFAULT_CLASS: RequestClass = {
  name: 'default',
  share: 1,
  method: 'GET',
  path: '/work',
  bodyBytes: 0,
};

/**
 * Assigns each origin its class and key. Classes follow a deterministic low-discrepancy
 * rule (largest remainder: the class furthest behind its share goes next), so after n
 * origins every class has its share of n to within one, and two runs at the same rate
 * send the same number of each class. Keys come from the class's own seeded stream.
 */
export class WorkloadMix {
  private readonly counts: number[];
  private n = 0;
  private readonly keyDraw: ((() => number) | undefined)[];
  private readonly bodies: (Buffer | undefined)[];
  private readonly bases: string[];

  constructor(
    readonly classes: readonly RequestClass[],
    rngFor: (cls: number) => Rng,
  ) {
    if (classes.length === 0) throw new RangeError('a workload mix needs at least one class');
    const total = classes.reduce((a, c) => a + c.share, 0);
    if (Math.abs(total - 1) > 1e-6)
      throw new RangeError(`the shares of a mix must sum to 100% (got ${(total * 100).toFixed(3)}%)`);
    this.counts = classes.map(() => 0);
    this.keyDraw = classes.map((c, i) => {
      const k = c.key;
      if (!k) return undefined;
      const rng = rngFor(i);
      if (k.dist === 'uniform') return () => 1 + Math.floor(rng.next() * k.keys);
      return zipfSampler(k.keys, k.exponent, rng);
    });
    this.bodies = classes.map((c) => (c.bodyBytes > 0 ? Buffer.alloc(c.bodyBytes, 0x61) : undefined));
    this.bases = classes.map((c) => {
      const sep = c.path.includes('?') ? '&' : '?';
      return c.cost ? `${c.path}${sep}cost=${encodeURIComponent(c.cost)}` : c.path;
    });
  }

  /** The next origin's request. */
  next(): RequestShape {
    this.n++;
    let best = 0;
    let bestDeficit = -Infinity;
    for (let i = 0; i < this.classes.length; i++) {
      const deficit = this.classes[i]!.share * this.n - this.counts[i]!;
      if (deficit > bestDeficit + 1e-12) {
        bestDeficit = deficit;
        best = i;
      }
    }
    this.counts[best]!++;
    const c = this.classes[best]!;
    const key = this.keyDraw[best]?.();
    const base = this.bases[best]!;
    const path = key === undefined ? base : `${base}${base.includes('?') ? '&' : '?'}key=${key}`;
    const shape = { cls: best, method: c.method, path, body: this.bodies[best], key };
    // The same low-discrepancy rule inside the class: exactly its share of origins, evenly spread.
    const n = this.counts[best]!;
    const cancel = c.cancel;
    return cancel && Math.floor(n * cancel.share) > Math.floor((n - 1) * cancel.share)
      ? { ...shape, cancelAfterTokens: cancel.afterTokens }
      : shape;
  }
}
