import { closeSync, openSync, writeSync } from 'node:fs';
import lz4 from 'lz4js';
import {
  CompressionType,
  compressionRegistry,
  Message,
  RecordBatchFileWriter,
  type Schema,
  type TypeMap,
} from 'apache-arrow';

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
  private fd: number | undefined;
  private ownsFd = false;
  private resumeAt: number | undefined;

  /**
   * Writes the file at `path` (or on the open descriptor `path`, which the caller closes) with
   * `schema`, each message straight to the operating system as it is made (apache-arrow's own
   * sinks queue bytes for a stream's next turn): when a batch's write() returns it is in the
   * file, and a run killed after it keeps it (arrowRead.ts). With `resumeAt`, the file's start
   * (magic and schema, `resumeAt` bytes) is already written, by another writer on another
   * thread: this one goes on from there (arrowWriterThread.ts).
   */
  open(path: string | number, schema: Schema<T>, resumeAt?: number): this {
    this.ownsFd = typeof path === 'string';
    this.fd = typeof path === 'string' ? openSync(path, 'w') : path;
    this.resumeAt = resumeAt;
    return this.reset(undefined, schema);
  }

  /** Bytes written so far. */
  get position(): number {
    return this._position;
  }

  /** The footer written and the file closed (when this writer opened it). */
  end(): void {
    this.finish();
    if (this.fd !== undefined && this.ownsFd) closeSync(this.fd);
    this.fd = undefined;
  }

  protected override _write(chunk: ArrayBufferView): this {
    if (!this._started || this.fd === undefined || chunk.byteLength === 0) return this;
    const bytes = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (let at = 0; at < bytes.byteLength;) at += writeSync(this.fd, bytes, at);
    this._position += bytes.byteLength;
    return this;
  }

  /**
   * The format's file is its stream between a leading magic and a footer, the stream opening
   * with the schema message; apache-arrow's file writer leaves that message out (its readers
   * take the schema from the footer). Written here, a file whose footer never came (a killed
   * run) is still a stream from byte 8 that any Arrow reader opens (arrowRead.ts).
   */
  protected override _writeSchema(schema: Schema<T>): this {
    if (this.resumeAt !== undefined) {
      this._position = this.resumeAt;
      return this;
    }
    this._writeMagic()._writePadding(2);
    return this._writeMessage(Message.from(schema));
  }

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
