import { goInt64 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { Toxic, ToxicKind } from './Toxic.js';

export interface SlowCloseAttributes {
  [k: string]: number;
  /** ms between the end of the stream and closing the connection */
  delay: number;
}

/** Delays the close of the connection by `delay` ms after the stream ends; data passes unchanged. */
export class SlowCloseToxic implements Toxic {
  constructor(private readonly a: SlowCloseAttributes) {}

  async pipe(stub: ToxicStub): Promise<void> {
    for (;;) {
      const c = await stub.read();
      if (c === INTERRUPTED || c === TIMED_OUT) return;
      if (c === null) {
        if (!(await stub.sleep(this.a.delay))) {
          // Interrupted while holding the end of stream: put it back so the next run
          // (or the removal's flush) still closes. Toxiproxy loses it here.
          stub.unreadEnd();
          return;
        }
        stub.close();
        return;
      }
      stub.output.push(c);
    }
  }
}

export const slowCloseKind: ToxicKind<SlowCloseAttributes> = {
  attributes: {
    name: 'SlowCloseToxic',
    typeName: 'toxics.SlowCloseToxic',
    fields: [{ json: 'delay', type: goInt64 }],
  },
  defaults: () => ({ delay: 0 }),
  create: (a) => new SlowCloseToxic(a),
};
