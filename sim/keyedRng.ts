import { deriveSeed, type Rng } from '../foundation/rng.js';

/**
 * Draws keyed by request rather than by order: `at(key)` restarts the stream at a state
 * that depends only on the seed and the key, so the same attempt draws the same work
 * whenever the api serves it. A lateness replay (orchestrator/run/replay.ts) simulates a
 * run twice, with the intended and with the lab's actual send times; requests are then
 * served in different orders, and a shared stream in service order would hand each a
 * different work time, adding noise the comparison would blame on lateness.
 *
 * One object, reseeded in place: no allocation per draw (a collapsed api serves millions).
 * The generator is mulberry32 (Tommy Ettinger's, public domain): 32-bit state, passes
 * gjrand and PractRand to 2^32 outputs, ample for the few draws one request makes.
 */
export class KeyedRng implements Rng {
  private state = 0;
  private readonly base: number;

  constructor(seed: number, stream: string) {
    this.base = deriveSeed(seed, stream);
  }

  /** Restarts the stream for `key` (a whole number up to 2^53). */
  at(key: number): this {
    const lo = key >>> 0;
    const hi = Math.floor(key / 2 ** 32) >>> 0;
    this.state = mix(mix(this.base ^ lo) ^ Math.imul(hi, 0x9e3779b1));
    return this;
  }

  /** A uniform number in [0, 1), 32 bits of it. */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/** A 32-bit avalanche (murmur3's finaliser): neighbouring keys start far apart. */
function mix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The key of one attempt: its origin and attempt number (attempt numbers stay below 4096). */
export function attemptKey(originId: number, attempt: number): number {
  return originId * 4096 + attempt;
}
