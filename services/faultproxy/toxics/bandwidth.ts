import { goInt64 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { Toxic, ToxicKind } from './Toxic.js';

export interface BandwidthAttributes {
  [k: string]: number;
  /** KB/s, which Toxiproxy treats as bytes per millisecond */
  rate: number;
}

/**
 * Limits a connection's direction to `rate` bytes/ms: each chunk waits len/rate ms,
 * and chunks larger than 100 ms worth are sent in 100 ms slices. The debt of sleep is
 * carried over, so timer overshoot is paid back on the next chunk.
 *
 * `rate` ≤ 0: Toxiproxy 2.12 never finishes slicing the chunk (rate 0 hangs the
 * stream, a negative rate panics); here both hold the data until the toxic is
 * changed or removed, which then forwards it.
 */
export class BandwidthToxic implements Toxic {
  constructor(private readonly a: BandwidthAttributes) {}

  async pipe(stub: ToxicStub): Promise<void> {
    let sleepMs = 0;
    for (;;) {
      const p = await stub.read();
      if (p === INTERRUPTED || p === TIMED_OUT) return;
      if (p === null) {
        stub.close();
        return;
      }
      const rate = this.a.rate;
      if (rate <= 0) {
        await stub.sleep(Number.POSITIVE_INFINITY);
        stub.output.push(p);
        return;
      }
      sleepMs += p.data.length / rate;
      let data = p.data;
      const slice = rate * 100;
      while (data.length > slice) {
        if (!(await stub.sleep(100))) {
          stub.output.push({ data, timestampMs: p.timestampMs });
          return;
        }
        stub.output.push({ data: data.subarray(0, slice), timestampMs: p.timestampMs });
        data = data.subarray(slice);
        sleepMs -= 100;
      }
      const start = stub.clock.now();
      const slept = await stub.sleep(sleepMs);
      stub.output.push(data === p.data ? p : { data, timestampMs: p.timestampMs });
      if (!slept) return;
      sleepMs -= stub.clock.now() - start;
    }
  }
}

export const bandwidthKind: ToxicKind<BandwidthAttributes> = {
  attributes: {
    name: 'BandwidthToxic',
    typeName: 'toxics.BandwidthToxic',
    fields: [{ json: 'rate', type: goInt64 }],
  },
  defaults: () => ({ rate: 0 }),
  create: (a) => new BandwidthToxic(a),
};
