import { createReadStream, createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { constants, createGunzip, createGzip, gunzipSync, type Gzip } from 'node:zlib';

/** Where events.ndjson lines go. `write` is on the hot path: it must not block. */
export interface EventSink {
  write(event: object): void;
  close(): Promise<void>;
}

/**
 * Which events a run writes to its event log:
 *   all       every line (attempts, outcomes, triggers, policy decisions);
 *   failures  the same without the successful attempts and outcomes (`kind: ok`), the bulk
 *             of a healthy run; what a failure analysis reads is all there;
 *   none      no event log at all.
 */
export const EVENTS_MODES = ['all', 'failures', 'none'] as const;
export type EventsMode = (typeof EVENTS_MODES)[number];

/** The event log's file name in a run folder (gzip-compressed ndjson). */
export const EVENTS_FILE = 'events.ndjson.gz';
/** What older results folders hold: the same lines, uncompressed. */
export const LEGACY_EVENTS_FILE = 'events.ndjson';

/**
 * Streams one JSON object per line to a gzip-compressed file. Lines are batched in
 * memory and handed to the compressor every 64 KiB (or at close), so a busy second
 * costs a few writes, not thousands. Compression runs in libuv's thread pool, at
 * level 1: a simulated retry storm's 38 MB log becomes 5 MB for a quarter of a CPU
 * second, where level 6 gains only a fifth more for almost three times the CPU, which
 * a lab run on a small machine would take from its load generator.
 */
export class NdjsonFile implements EventSink {
  private readonly out: WriteStream;
  private readonly gzip: Gzip;
  private buf: string[] = [];
  private bytes = 0;

  constructor(path: string) {
    this.out = createWriteStream(path, { flags: 'w' });
    this.gzip = createGzip({ level: constants.Z_BEST_SPEED });
    this.gzip.pipe(this.out);
  }

  write(event: object): void {
    const line = JSON.stringify(event) + '\n';
    this.buf.push(line);
    this.bytes += line.length;
    if (this.bytes >= 65536) this.flush();
  }

  private flush(): void {
    if (this.buf.length === 0) return;
    this.gzip.write(this.buf.join(''));
    this.buf = [];
    this.bytes = 0;
  }

  close(): Promise<void> {
    this.flush();
    return new Promise((resolve, reject) => {
      this.out.once('error', reject);
      this.gzip.once('error', reject);
      this.out.once('close', () => resolve());
      this.gzip.end();
    });
  }
}

/** A successful attempt or outcome: what `--events failures` leaves out. */
function isSuccess(event: object): boolean {
  const e = event as { e?: unknown; kind?: unknown };
  return (e.e === 'attempt' || e.e === 'outcome') && e.kind === 'ok';
}

/** The sink a run writes its event log through, for a mode; `open` makes the file (not called for `none`). */
export function eventSink(mode: EventsMode, open: () => EventSink): EventSink {
  if (mode === 'none') return nullSink;
  const file = open();
  if (mode === 'all') return file;
  return { write: (e) => (isSuccess(e) ? undefined : file.write(e)), close: () => file.close() };
}

/** Both sinks get every event (the event log and an in-memory consumer). */
export function teeSink(a: EventSink, b: EventSink): EventSink {
  return {
    write(e) {
      a.write(e);
      b.write(e);
    },
    close: async () => {
      await Promise.all([a.close(), b.close()]);
    },
  };
}

/** The event log of a run folder: events.ndjson.gz, or an older folder's events.ndjson; null without one. */
export function eventsFileOf(runDir: string): string | null {
  for (const f of [EVENTS_FILE, LEGACY_EVENTS_FILE]) if (existsSync(join(runDir, f))) return join(runDir, f);
  return null;
}

/** The lines of an event log, compressed or not (by its name), one at a time. */
export function eventLines(path: string): AsyncIterable<string> {
  const raw = createReadStream(path);
  const input = path.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  return createInterface({ input, crlfDelay: Infinity });
}

/**
 * Every event of a run folder's log, parsed (for tests and small logs: it holds them all
 * in memory); a torn last line of an interrupted run is skipped. [] without a log.
 */
export function readEvents(runDir: string): Record<string, unknown>[] {
  const path = eventsFileOf(runDir);
  if (path === null) return [];
  const buf = readFileSync(path);
  const text = (
    path.endsWith('.gz') ? gunzipSync(buf, { finishFlush: constants.Z_SYNC_FLUSH }) : buf
  ).toString('utf8');
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      out.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      /* a torn last line */
    }
  }
  return out;
}

/** Discards events (for tests and benchmarks that only want the buckets). */
export const nullSink: EventSink = { write() {}, close: async () => {} };
