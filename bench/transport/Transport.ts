import type { AbortSignalLike } from '../../foundation/abortSignal.js';
import type { Attempt, OutcomeKind } from '../outcome.js';
import type { StreamTiming } from './sse.js';

/** What a transport reports for one attempt; timing is taken by the caller's clock. */
export interface TransportResult {
  readonly kind: OutcomeKind;
  readonly status: number;
  /** Retry-After of a 429 or 503, in ms, when the server sent one. */
  readonly retryAfterMs?: number;
  /** Time the attempt waited inside the client for a connection before it was sent. */
  readonly clientWaitMs?: number;
  /** A streamed (SSE) answer: time to first token, inter-token latency, tokens. */
  readonly stream?: StreamTiming;
}

/** The transport's side of the dispatch seam (bench/policy/dispatch.ts): one result per attempt. */
export interface TransportHandler {
  onResult(result: TransportResult): void;
}

/**
 * Sends one attempt. HTTP/1.1 over plain sockets in the lab (http.ts); a simulated network in the simulator.
 * `send` never rejects: every failure is a kind. When `signal` aborts it settles promptly
 * with whatever kind the transport saw (the caller decides whether that was a timeout).
 * An attempt goes to replica `attempt.replica ?? 0` of the endpoints the transport was
 * built with (replicas.ts); an index it does not reach is a bug, and throws.
 */
export interface Transport {
  send(
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    signal: AbortSignalLike,
  ): Promise<TransportResult>;
  /**
   * The same attempt without a promise: its result goes to `handler`, and the returned
   * InFlight aborts it (bench/policy/dispatch.ts). The lab's HTTP transport and the
   * simulator's have it; the client calls it when present.
   */
  readonly dispatch?: (
    attempt: Attempt,
    headers: Record<string, string> | undefined,
    handler: TransportHandler,
  ) => { abort(): void };
  close(): Promise<void>;
  /** Attempts on the wire now, where the transport has connections to count. */
  readonly openConnections?: number;
  /** How many api replicas (endpoints) it reaches, indexed 0..replicas-1. Absent: 1. */
  readonly replicas?: number;
}
