import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The JVM's GC log (-Xlog:gc:file=…), read as it grows: one line per collection,
 * "[1.234s][info][gc] GC(7) Pause Full (Allocation Failure) 46M->45M(46M) 21.3ms".
 * The VM writes it at the end of every pause, so it is readable while the JVM is too busy
 * collecting to answer its own /metrics (the GC-thrashing state this server reproduces).
 */
export class GcLog {
  private offset = 0;
  private rest = '';
  private pauseMs = 0;
  private collections = 0;

  constructor(private readonly path: string) {}

  /** Reads what was appended since the last call; a missing file (not written yet) reads as nothing. */
  poll(): void {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return;
    }
    try {
      const buf = Buffer.alloc(1 << 16);
      for (;;) {
        const n = readSync(fd, buf, 0, buf.length, this.offset);
        if (n <= 0) break;
        this.offset += n;
        this.rest += buf.toString('latin1', 0, n);
      }
    } finally {
      closeSync(fd);
    }
    const lines = this.rest.split('\n');
    this.rest = lines.pop() ?? ''; // a line the VM is still writing waits for the next poll
    for (const line of lines) this.add(line);
  }

  /** One log line: a pause adds its time and one collection; any other line is ignored. */
  add(line: string): void {
    const m = PAUSE.exec(line);
    if (!m) return;
    this.pauseMs += Number(m[1]);
    this.collections++;
  }

  /** The GC series in the bench's names (cumulative): GC seconds, and collections. */
  text(): string {
    return (
      '# TYPE jvm_gc_time_seconds_total counter\n' +
      `jvm_gc_time_seconds_total ${this.pauseMs / 1000}\n` +
      '# TYPE jvm_gc_collections_total counter\n' +
      `jvm_gc_collections_total ${this.collections}\n`
    );
  }
}

/** A collection's line: "Pause …" and, at its end, the pause's length in ms. */
const PAUSE = /\bPause\b.*\s([0-9]+(?:\.[0-9]+)?)ms\s*$/;

/** The /metrics text without its own GC counters (the log's replace them: one source for a run). */
export function withoutGcCounters(text: string): string {
  return text
    .split('\n')
    .filter((l) => !/^(# (HELP|TYPE) )?jvm_gc_(time_seconds|collections)_total\b/.test(l))
    .join('\n');
}
