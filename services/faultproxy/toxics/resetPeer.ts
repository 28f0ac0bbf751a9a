import { goInt64 } from '../goJson.js';
import { INTERRUPTED, type ToxicStub } from '../stub.js';
import type { Toxic, ToxicKind } from './Toxic.js';

export interface ResetPeerAttributes {
  [k: string]: number;
  /** ms after the first chunk (or the end of stream) before the reset */
  timeout: number;
}

/**
 * Resets the connection: on the first chunk in its direction (which is dropped) it
 * waits `timeout` ms, uninterruptibly as in Toxiproxy, then closes both sockets with
 * an RST (SO_LINGER 0) instead of a FIN.
 *
 * Unlike Toxiproxy 2.12, the RST is armed when the toxic fires, not when the
 * connection starts: a connection opened before the toxic was added is reset too, and
 * `toxicity: 0` leaves normal closes alone (Toxiproxy issue #603).
 */
export class ResetPeerToxic implements Toxic {
  constructor(private readonly a: ResetPeerAttributes) {}

  async pipe(stub: ToxicStub): Promise<void> {
    const c = await stub.read();
    if (c === INTERRUPTED) return;
    await stub.sleepThrough(this.a.timeout);
    stub.closeWithReset();
  }
}

export const resetPeerKind: ToxicKind<ResetPeerAttributes> = {
  attributes: {
    name: 'ResetToxic',
    typeName: 'toxics.ResetToxic',
    fields: [{ json: 'timeout', type: goInt64 }],
  },
  defaults: () => ({ timeout: 0 }),
  create: (a) => new ResetPeerToxic(a),
};
