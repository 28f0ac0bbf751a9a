import lz4 from 'lz4js';
import { CompressionType, compressionRegistry, RecordBatchFileWriter, type TypeMap } from 'apache-arrow';

/**
 * LZ4 frame compression for Arrow IPC bodies: apache-arrow ships no codecs, it looks them up
 * in its registry when it writes or reads a compressed batch. Every module that writes or
 * reads events.arrow imports this one, so the registry holds the codec wherever it is needed.
 */
compressionRegistry.set(CompressionType.LZ4_FRAME, {
  encode: (data) => lz4.compress(data),
  decode: (data) => lz4.decompress(data),
});

/** The IPC body compression events.arrow is written with. */
export const EVENTS_COMPRESSION = CompressionType.LZ4_FRAME;

const PREFIX = 8;

/**
 * apache-arrow 21.2.0 prefixes each compressed body buffer with its compressed length; the
 * format (and pyarrow, which sizes its output from it) wants the uncompressed length. Its own
 * reader never looks at the prefix beyond -1, so JS-to-JS round trips hide the slip. This
 * writer puts the uncompressed length back. Buffers come in pairs (prefix, body); -1 (left
 * uncompressed) and 0 (empty) are already right.
 */
export class CompressedFileWriter<T extends TypeMap = TypeMap> extends RecordBatchFileWriter<T> {
  protected override _compressBodyBuffers(
    buffers: ArrayBufferView[],
  ): ReturnType<RecordBatchFileWriter<T>['_compressBodyBuffers']> {
    const sizes = buffers.map((b) => b.byteLength);
    const out = super._compressBodyBuffers(buffers);
    for (let i = 0; i < sizes.length; i++) {
      const prefix = out.buffers[2 * i] as Uint8Array;
      if (prefix.byteLength !== PREFIX) continue;
      const view = new DataView(prefix.buffer, prefix.byteOffset, PREFIX);
      if (view.getBigInt64(0, true) > 0n) view.setBigInt64(0, BigInt(sizes[i]!), true);
    }
    return out;
  }
}
