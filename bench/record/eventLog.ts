import { createWriteStream, type WriteStream } from 'node:fs';

/** Where events.ndjson lines go. `write` is on the hot path: it must not block. */
export interface EventSink {
  write(event: object): void;
  close(): Promise<void>;
}

/**
 * Streams one JSON object per line to a file. Lines are batched in memory and handed
 * to the file stream every 64 KiB (or at close), so a busy second costs a few writes,
 * not thousands.
 */
export class NdjsonFile implements EventSink {
  private readonly out: WriteStream;
  private buf: string[] = [];
  private bytes = 0;

  constructor(path: string) {
    this.out = createWriteStream(path, { flags: 'w' });
  }

  write(event: object): void {
    const line = JSON.stringify(event) + '\n';
    this.buf.push(line);
    this.bytes += line.length;
    if (this.bytes >= 65536) this.flush();
  }

  private flush(): void {
    if (this.buf.length === 0) return;
    this.out.write(this.buf.join(''));
    this.buf = [];
    this.bytes = 0;
  }

  close(): Promise<void> {
    this.flush();
    return new Promise((resolve, reject) => {
      this.out.end((err?: Error | null) => (err ? reject(err) : resolve()));
    });
  }
}

/** Discards events (for tests and benchmarks that only want the buckets). */
export const nullSink: EventSink = { write() {}, close: async () => {} };
