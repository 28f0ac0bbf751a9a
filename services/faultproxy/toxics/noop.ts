import type { ToxicStub } from '../stub.js';
import type { Toxic, ToxicKind } from './Toxic.js';

/** Passes everything through unchanged. Heads every chain, hidden, so the first real toxic can be interrupted. */
export class NoopToxic implements Toxic {
  pipe(stub: ToxicStub): Promise<void> {
    return stub.passThrough();
  }
}

export const noop = new NoopToxic();

export const noopKind: ToxicKind = {
  attributes: { name: 'NoopToxic', typeName: 'toxics.NoopToxic', fields: [] },
  defaults: () => ({}),
  create: () => noop,
};
