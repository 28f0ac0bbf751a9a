import { goInt } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { Toxic, ToxicKind } from './Toxic.js';

export interface SlicerAttributes {
  [k: string]: number;
  /** bytes, the average slice */
  average_size: number;
  /** bytes, ± around the average (should be below it) */
  size_variation: number;
  /** µs between slices */
  delay: number;
}

/** Cuts each chunk into slices of about `average_size` bytes, `delay` µs apart (real TCP rarely delivers whole writes). */
export class SlicerToxic implements Toxic {
  constructor(private readonly a: SlicerAttributes) {}

  /**
   * Offsets [s0, e0, s1, e1, …] cutting [start, end): split near the middle, ±
   * size_variation, until a piece is within size_variation of the average. As in
   * Toxiproxy, with a guard where Go would recurse forever or panic (variation 0).
   */
  cuts(start: number, end: number, next: () => number): number[] {
    const { average_size: avg, size_variation: variation } = this.a;
    if (end - start - avg <= variation) return [start, end];
    const jitter = variation > 0 ? Math.floor(next() * variation * 2) - variation : 0;
    const mid = start + Math.floor((end - start) / 2) + jitter;
    if (mid <= start || mid >= end) return [start, end];
    return [...this.cuts(start, mid, next), ...this.cuts(mid, end, next)];
  }

  async pipe(stub: ToxicStub): Promise<void> {
    const next = (): number => stub.rng.next();
    for (;;) {
      const c = await stub.read();
      if (c === INTERRUPTED || c === TIMED_OUT) return;
      if (c === null) {
        stub.close();
        return;
      }
      const cuts = this.cuts(0, c.data.length, next);
      for (let i = 1; i < cuts.length; i += 2) {
        stub.output.push({ data: c.data.subarray(cuts[i - 1], cuts[i]), timestampMs: c.timestampMs });
        if (!(await stub.sleep(this.a.delay / 1000))) {
          const rest = c.data.subarray(cuts[i]);
          if (rest.length > 0) stub.output.push({ data: rest, timestampMs: c.timestampMs });
          return;
        }
      }
    }
  }
}

export const slicerKind: ToxicKind<SlicerAttributes> = {
  attributes: {
    name: 'SlicerToxic',
    typeName: 'toxics.SlicerToxic',
    fields: [
      { json: 'average_size', type: goInt },
      { json: 'size_variation', type: goInt },
      { json: 'delay', type: goInt },
    ],
  },
  defaults: () => ({ average_size: 0, size_variation: 0, delay: 0 }),
  create: (a) => new SlicerToxic(a),
};
