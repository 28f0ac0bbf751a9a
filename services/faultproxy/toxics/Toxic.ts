import type { ToxicStub } from '../stub.js';
import type { Direction } from '../stream.js';
import type { GoStruct } from '../goJson.js';

/**
 * A toxic, as in Toxiproxy: only its settings and `pipe()`. One toxic config serves
 * every connection of a proxy; per-connection data lives on the stub.
 *
 * `pipe(stub)` reads chunks with `stub.read()`, writes them with `stub.output.push()`,
 * and returns when the stream ends (after `stub.close()`) or when a read or sleep
 * returns INTERRUPTED. An interrupted toxic forwards the chunk it holds before
 * returning: changing the chain never drops data.
 */
export interface Toxic {
  pipe(stub: ToxicStub): Promise<void>;
}

/** A toxic that needs a queue in front of it (Toxiproxy's BufferedToxic), in chunks. */
export interface BufferedToxic extends Toxic {
  bufferSize(): number;
}
/** A toxic with per-connection state, created when the toxic meets a connection. */
export interface StatefulToxic extends Toxic {
  newState(): unknown;
}
/** A toxic that must act when removed (timeout closes its connections). */
export interface CleanupToxic extends Toxic {
  cleanup(stub: ToxicStub): void;
}

export const isBuffered = (t: Toxic): t is BufferedToxic =>
  typeof (t as BufferedToxic).bufferSize === 'function';
export const isStateful = (t: Toxic): t is StatefulToxic =>
  typeof (t as StatefulToxic).newState === 'function';
export const hasCleanup = (t: Toxic): t is CleanupToxic => typeof (t as CleanupToxic).cleanup === 'function';

/**
 * A kind of toxic: its attribute struct (Go field names and types, for decoding
 * request bodies exactly as Toxiproxy's Go structs do) and a factory taking the
 * decoded attributes. Attributes are plain objects so an update can merge into a copy.
 */
export interface ToxicKind<A extends Record<string, number> = Record<string, number>> {
  readonly attributes: GoStruct;
  defaults(): A;
  create(attrs: A): Toxic;
}

/** A toxic as the API knows it (Toxiproxy's ToxicWrapper). */
export interface ToxicWrapper {
  name: string;
  type: string;
  /** As given in the request (parsed case-insensitively into `direction`). */
  stream: string;
  /** Probability in [0, 1] that a connection gets the toxic; a float32, as in Toxiproxy. */
  toxicity: number;
  direction: Direction;
  attributes: Record<string, number>;
  toxic: Toxic;
  /** Position in its direction's chain (0 is the hidden noop); -1 once removed. */
  index: number;
}
