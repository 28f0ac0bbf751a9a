import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';

/** A seeded source of uniform numbers in [0, 1). Injected wherever bench/ needs chance. */
export interface Rng {
  next(): number;
}

/** A deterministic Rng for `seed`, one independent stream per `stream` label. */
export function seededRng(seed: number, stream = ''): Rng {
  const gen = xoroshiro128plus(deriveSeed(seed, stream));
  return { next: () => uniformFloat64(gen) };
}

/**
 * Mixes a seed with a label (FNV-1a over the label, then a 32-bit avalanche), so
 * arrivals, work times and jitter draw from unrelated streams of one experiment seed,
 * and run i of a repetition gets its own seed.
 */
export function deriveSeed(seed: number, label: string | number): number {
  let h = 0x811c9dc5 ^ (seed >>> 0) ^ Math.floor(seed / 2 ** 32);
  const s = String(label);
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
