import { goFloat32 } from '../goJson.js';
import { INTERRUPTED, TIMED_OUT, type ToxicStub } from '../stub.js';
import type { CleanupToxic, StatefulToxic, ToxicKind } from './Toxic.js';

export interface LossAttributes {
  [k: string]: number;
  /** Probability in [0, 1] that each message (what one read returns) is lost. */
  probability: number;
}

interface LossState {
  /** A message of this connection's direction was lost: the stream behind it is stalled. */
  lost: boolean;
}

/**
 * Message loss under a reliable transport (metabench's, not in Toxiproxy 2.12). Each
 * message (a chunk as one read returns it: on loopback, one small HTTP request or
 * response) is lost with `probability`. TCP would retransmit a lost segment, so the
 * honest effect of a lost message over HTTP is a stream that stalls at the hole: the
 * lost message and everything after it in that direction are never delivered, and the
 * connection stays open, so the client sees only its own timeout. The connection's
 * loss survives changes of the chain; removing the toxic closes the connections it
 * stalled (their streams are broken), as removing `timeout` does. `toxicity` keeps
 * Toxiproxy's meaning: the share of connections the toxic sits on.
 */
export class LossToxic implements StatefulToxic, CleanupToxic {
  constructor(private readonly a: LossAttributes) {}

  newState(): LossState {
    return { lost: false };
  }

  async pipe(stub: ToxicStub): Promise<void> {
    const state = stub.state as LossState;
    for (;;) {
      const c = await stub.read();
      if (c === INTERRUPTED || c === TIMED_OUT) return;
      if (c === null) {
        stub.close();
        return;
      }
      if (!state.lost && stub.rng.next() < this.a.probability) state.lost = true;
      if (!state.lost) stub.output.push(c);
    }
  }

  cleanup(stub: ToxicStub): void {
    if ((stub.state as LossState | undefined)?.lost) stub.close();
  }
}

export const lossKind: ToxicKind<LossAttributes> = {
  attributes: {
    name: 'LossToxic',
    typeName: 'toxics.LossToxic',
    fields: [{ json: 'probability', type: goFloat32 }],
  },
  defaults: () => ({ probability: 0 }),
  create: (a) => new LossToxic(a),
};
