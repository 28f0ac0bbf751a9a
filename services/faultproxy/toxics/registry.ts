import { bandwidthKind } from './bandwidth.js';
import { latencyKind } from './latency.js';
import { limitDataKind } from './limitData.js';
import { lossKind } from './loss.js';
import { noopKind } from './noop.js';
import { resetPeerKind } from './resetPeer.js';
import { slicerKind } from './slicer.js';
import { slowCloseKind } from './slowClose.js';
import { timeoutKind } from './timeout.js';
import type { ToxicKind } from './Toxic.js';

/** Every toxic type the API accepts, by its Toxiproxy name. A new toxic is one file and one line here. */
export const toxicKinds: Readonly<Record<string, ToxicKind>> = {
  noop: noopKind,
  latency: latencyKind as ToxicKind,
  bandwidth: bandwidthKind as ToxicKind,
  slow_close: slowCloseKind as ToxicKind,
  timeout: timeoutKind as ToxicKind,
  reset_peer: resetPeerKind as ToxicKind,
  slicer: slicerKind as ToxicKind,
  limit_data: limitDataKind as ToxicKind,
  loss: lossKind as ToxicKind,
};

export function toxicKind(type: string): ToxicKind | undefined {
  return Object.hasOwn(toxicKinds, type) ? toxicKinds[type] : undefined;
}
