import { goInt64 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { CleanupToxic, ToxicKind } from './Toxic.js';

export interface TimeoutAttributes {
  [k: string]: number;
  /** ms of silence before the connection is closed; 0 = never close */
  timeout: number;
}

/**
 * Black-holes the direction: every chunk is dropped, and the connection is closed once
 * `timeout` ms pass without a chunk (Toxiproxy re-arms its timer after each dropped
 * chunk). With timeout 0 the connection stays open, silent. Removing the toxic closes
 * every connection it sat on, as in Toxiproxy: the dropped bytes left the streams
 * unusable.
 */
export class TimeoutToxic implements CleanupToxic {
  constructor(private readonly a: TimeoutAttributes) {}

  async pipe(stub: ToxicStub): Promise<void> {
    const timeoutMs = this.a.timeout;
    for (;;) {
      const c = await stub.read(timeoutMs > 0 ? stub.clock.now() + timeoutMs : undefined);
      if (c === INTERRUPTED) return;
      if (c === TIMED_OUT || c === null) {
        stub.close();
        return;
      }
      // Dropped on the floor.
    }
  }

  cleanup(stub: ToxicStub): void {
    stub.close();
  }
}

export const timeoutKind: ToxicKind<TimeoutAttributes> = {
  attributes: {
    name: 'TimeoutToxic',
    typeName: 'toxics.TimeoutToxic',
    fields: [{ json: 'timeout', type: goInt64 }],
  },
  defaults: () => ({ timeout: 0 }),
  create: (a) => new TimeoutToxic(a),
};
