import { goInt64 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { BufferedToxic, ToxicKind } from './Toxic.js';

export interface LatencyAttributes {
  [k: string]: number;
  /** ms added to every chunk */
  latency: number;
  /** ms; each chunk's delay is latency + U[-jitter, +jitter) */
  jitter: number;
}

/**
 * Delays every chunk to `receipt + latency ± jitter`. The delay counts from when the
 * chunk was read, so a chunk that queued behind a slower one is not delayed twice.
 */
export class LatencyToxic implements BufferedToxic {
  constructor(private readonly a: LatencyAttributes) {}

  bufferSize(): number {
    return 1024;
  }

  /** latency ± jitter in ms, as Toxiproxy draws it: rand.Int63n(2·jitter) − jitter. */
  delayMs(next: () => number): number {
    const { latency, jitter } = this.a;
    return jitter > 0 ? latency + Math.floor(next() * 2 * jitter) - jitter : latency;
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
      const sleepMs = this.delayMs(next) - (stub.clock.now() - c.timestampMs);
      if (!(await stub.sleep(sleepMs))) {
        stub.output.push(c); // interrupted: forward it now rather than drop it
        return;
      }
      // As Toxiproxy does: a latency toxic further down the chain adds its own delay.
      c.timestampMs += sleepMs;
      stub.output.push(c);
    }
  }
}

export const latencyKind: ToxicKind<LatencyAttributes> = {
  attributes: {
    name: 'LatencyToxic',
    typeName: 'toxics.LatencyToxic',
    fields: [
      { json: 'latency', type: goInt64 },
      { json: 'jitter', type: goInt64 },
    ],
  },
  defaults: () => ({ latency: 0, jitter: 0 }),
  create: (a) => new LatencyToxic(a),
};
