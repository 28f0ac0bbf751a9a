import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import type { Attempt } from '../outcome.js';
import type { Transport, TransportResult } from './Transport.js';
import { nativeDispatchOf, type DispatchTransport, type TransportHandler } from '../policy/dispatch.js';

/**
 * One transport over the api's replicas: `endpoints[i]` carries the attempts whose
 * `replica` is i, each with its own connections and connection cap (as undici's Agent
 * keeps a pool per origin), so a slow replica holds only its own connections. The
 * endpoint transports each reach one server and ignore `attempt.replica`.
 *
 * With one endpoint it is that endpoint itself: a lab without replicas sends exactly as
 * before, with no extra call per attempt.
 */
export function overReplicas(endpoints: readonly Transport[]): Transport {
  if (endpoints.length === 0) throw new RangeError('a transport needs at least one endpoint');
  return endpoints.length === 1 ? endpoints[0]! : new ReplicaTransport(endpoints);
}

/** How many replicas `t` reaches (a transport that does not say reaches one). */
export function replicasOf(t: Transport): number {
  return t.replicas ?? 1;
}

class ReplicaTransport implements Transport {
  readonly replicas: number;
  /** The endpoints' sum, when they count their connections (absent otherwise, as for one endpoint). */
  declare readonly openConnections?: number;
  /** Passed through when every endpoint dispatches natively; absent otherwise. */
  declare readonly dispatch?: DispatchTransport['dispatch'];

  constructor(private readonly endpoints: readonly Transport[]) {
    this.replicas = endpoints.length;
    if (endpoints.every((t) => t.openConnections !== undefined))
      Object.defineProperty(this, 'openConnections', {
        get: () => endpoints.reduce((sum, t) => sum + (t.openConnections ?? 0), 0),
      });
    const native = endpoints.map(nativeDispatchOf);
    if (native.every((d) => d !== undefined))
      Object.defineProperty(this, 'dispatch', {
        value: (attempt: Attempt, headers: Record<string, string> | undefined, handler: TransportHandler) =>
          native[this.index(attempt)]!(attempt, headers, handler),
      });
  }

  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
  ): Promise<TransportResult> {
    return this.endpoint(attempt).send(attempt, headers, signal);
  }

  private endpoint(attempt: Attempt): Transport {
    return this.endpoints[this.index(attempt)]!;
  }

  private index(attempt: Attempt): number {
    const i = attempt.replica ?? 0;
    if (!(Number.isInteger(i) && i >= 0 && i < this.replicas))
      throw new RangeError(`replica ${i} does not exist: this transport reaches ${this.replicas}`);
    return i;
  }

  async close(): Promise<void> {
    await Promise.all(this.endpoints.map((t) => t.close()));
  }
}
