import lz4 from 'lz4js';
import { MessageReader } from 'apache-arrow';

/** What the record batches of an Arrow IPC file hold in their bodies, read from the bytes. */
export interface IpcBodies {
  readonly batches: number;
  /** Batches whose metadata names a body compression. */
  readonly compressed: number;
  /** Buffers stored compressed (prefix > 0) and those left as they were (prefix -1). */
  readonly packedBuffers: number;
  readonly plainBuffers: number;
  /** Compressed buffers whose 8-byte prefix is not their decompressed length (the format's rule, which pyarrow relies on). */
  readonly wrongPrefixes: number;
  readonly bodyBytes: number;
  readonly rawBytes: number;
}

/**
 * Walks the messages of an IPC file (after its 8-byte magic) and, for each record batch,
 * every body buffer: its length prefix, and its bytes decompressed as an LZ4 frame.
 */
export function ipcBodies(file: Uint8Array): IpcBodies {
  const reader = new MessageReader(file.subarray(8));
  const s = {
    batches: 0,
    compressed: 0,
    packedBuffers: 0,
    plainBuffers: 0,
    wrongPrefixes: 0,
    bodyBytes: 0,
    rawBytes: 0,
  };
  for (let m = reader.readMessage(); m; m = reader.readMessage()) {
    const body = reader.readMessageBody(m.bodyLength);
    if (!m.isRecordBatch()) continue;
    const header = m.header();
    s.batches++;
    s.bodyBytes += m.bodyLength;
    if (!header.compression) {
      s.rawBytes += m.bodyLength;
      continue;
    }
    s.compressed++;
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    for (const region of header.buffers) {
      if (region.length === 0) continue;
      const prefix = Number(view.getBigInt64(region.offset, true));
      const data = body.subarray(region.offset + 8, region.offset + region.length);
      if (prefix === -1) {
        s.plainBuffers++;
        s.rawBytes += data.byteLength;
        continue;
      }
      s.packedBuffers++;
      const raw = lz4.decompress(data);
      s.rawBytes += raw.byteLength;
      if (raw.byteLength !== prefix) s.wrongPrefixes++;
    }
  }
  return s;
}
