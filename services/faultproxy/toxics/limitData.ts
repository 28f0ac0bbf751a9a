import { goInt64 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { StatefulToxic, ToxicKind } from './Toxic.js';

export interface LimitDataAttributes {
  [k: string]: number;
  /** bytes a connection may send in this direction before it is closed */
  bytes: number;
}

interface LimitDataState {
  transmittedBytes: number;
}

/** Forwards up to `bytes` per connection and direction, then closes. The count survives updates of the toxic. */
export class LimitDataToxic implements StatefulToxic {
  constructor(private readonly a: LimitDataAttributes) {}

  newState(): LimitDataState {
    return { transmittedBytes: 0 };
  }

  async pipe(stub: ToxicStub): Promise<void> {
    const state = stub.state as LimitDataState;
    let remaining = this.a.bytes - state.transmittedBytes;
    for (;;) {
      const c = await stub.read();
      if (c === INTERRUPTED || c === TIMED_OUT) return;
      if (c === null) {
        stub.close();
        return;
      }
      if (remaining < 0) remaining = 0;
      const data = remaining < c.data.length ? c.data.subarray(0, remaining) : c.data;
      if (data.length > 0) {
        stub.output.push(data === c.data ? c : { data, timestampMs: c.timestampMs });
        state.transmittedBytes += data.length;
      }
      remaining = this.a.bytes - state.transmittedBytes;
      if (remaining <= 0) {
        stub.close();
        return;
      }
    }
  }
}

export const limitDataKind: ToxicKind<LimitDataAttributes> = {
  attributes: {
    name: 'LimitDataToxic',
    typeName: 'toxics.LimitDataToxic',
    fields: [{ json: 'bytes', type: goInt64 }],
  },
  defaults: () => ({ bytes: 0 }),
  create: (a) => new LimitDataToxic(a),
};
