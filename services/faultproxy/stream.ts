/**
 * The units that flow through a link: chunks of bytes stamped with the time they were
 * read, and the two directions of a connection.
 */

/** `upstream` = client → server bytes; `downstream` = server → client bytes. */
export type Direction = 'upstream' | 'downstream';
export const directions: readonly Direction[] = ['upstream', 'downstream'];

/** Toxiproxy's stream.ParseDirection: case-insensitive, anything else is invalid. */
export function parseDirection(value: string): Direction | undefined {
  const v = value.toLowerCase();
  return v === 'upstream' || v === 'downstream' ? v : undefined;
}

export interface Chunk {
  data: Buffer;
  /**
   * When the bytes were read from the source socket (clock ms). Latency is applied
   * relative to this, so a chunk that waited behind another is not delayed twice.
   */
  timestampMs: number;
}

/** Where a stage of the chain delivers: the next stub's input, or the link's writer. */
export interface ChunkSink {
  push(c: Chunk): void;
  /** End of stream: no chunk follows. */
  end(): void;
}
