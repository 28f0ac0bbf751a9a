import { createReadStream, createWriteStream, existsSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { ArrowEventFile } from './arrowEvents.js';
import { arrowEvents } from './arrowRead.js';
import { attemptEvent, outcomeEvent } from './eventEncoding.js';
import { failuresOnly, nullSink, type EventSink } from './eventSink.js';
import { constants, createGunzip, createGzip, gunzipSync, type Gzip } from 'node:zlib';

export type { EventSink } from './eventSink.js';
export { failuresOnly, lineSink, nullSink, teeSink } from './eventSink.js';

/**
 * Which events a run writes to its event log:
 *   all       every event (attempts, outcomes, triggers, policy decisions), as Arrow
 *             (events.arrow and events.notes.arrow);
 *   failures  the same without the successful attempts and outcomes (`kind: ok`), the bulk
 *             of a healthy run; what a failure analysis reads is all there;
 *   none      no event log at all;
 *   ndjson    every event as one JSON line each, gzip-compressed (events.ndjson.gz).
 */
export const EVENTS_MODES = ['all', 'failures', 'none', 'ndjson'] as const;
export type EventsMode = (typeof EVENTS_MODES)[number];

/** The event log's file in a run folder: Apache Arrow IPC (eventColumns.ts), with its notes table. */
export const EVENTS_FILE = 'events.arrow';
export const NOTES_FILE = 'events.notes.arrow';
/** The same events as gzip-compressed JSON lines (`--events ndjson`, and folders before Arrow). */
export const NDJSON_EVENTS_FILE = 'events.ndjson.gz';
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

  attempt(a: Attempt, r: AttemptResult): void {
    this.write(attemptEvent(a, r));
  }

  outcome(o: Origin, r: AttemptResult, kind: OutcomeKind): void {
    this.write(outcomeEvent(o, r, kind));
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

/** The sink a run writes its event log through, into the run folder `dir`. */
export function eventSink(mode: EventsMode, dir: string): EventSink {
  switch (mode) {
    case 'none':
      return nullSink;
    case 'ndjson':
      return new NdjsonFile(join(dir, NDJSON_EVENTS_FILE));
    case 'all':
      return new ArrowEventFile(join(dir, EVENTS_FILE), join(dir, NOTES_FILE));
    case 'failures':
      // No writer thread: a sweep's runs (failures is its default) are many and each writes a
      // few batches, fewer than a thread's start-up (Arrow and LZ4 loaded anew) costs: a
      // 20-point sweep took 4-10 CPU-s more with one (2026-12-07).
      return failuresOnly(new ArrowEventFile(join(dir, EVENTS_FILE), join(dir, NOTES_FILE), false));
  }
}

/** The event log of a run folder: events.arrow, events.ndjson.gz or an older folder's events.ndjson; null without one. */
export function eventsFileOf(runDir: string): string | null {
  for (const f of [EVENTS_FILE, NDJSON_EVENTS_FILE, LEGACY_EVENTS_FILE])
    if (existsSync(join(runDir, f))) return join(runDir, f);
  return null;
}

/**
 * Every event of a run folder's log, one at a time, as its ndjson line's object whatever
 * the file's format (Arrow rows become the lines they stand for, notes in their place);
 * a torn last line of an interrupted ndjson log is skipped. Nothing without a log.
 */
export async function* eachEvent(runDir: string): AsyncIterable<Record<string, unknown>> {
  const path = eventsFileOf(runDir);
  if (path === null) return;
  if (path.endsWith('.arrow')) {
    yield* arrowEvents(path, join(runDir, NOTES_FILE));
    return;
  }
  const raw = createReadStream(path);
  const input = path.endsWith('.gz') ? raw.pipe(createGunzip({ finishFlush: constants.Z_SYNC_FLUSH })) : raw;
  for await (const line of createInterface({ input, crlfDelay: Infinity })) {
    const e = parseLine(line);
    if (e) yield e;
  }
}

function parseLine(line: string): Record<string, unknown> | null {
  if (line === '') return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null; // a torn last line
  }
}

/**
 * Every event of a run folder's log (eachEvent), all in memory: for tests and small logs.
 * [] without a log.
 */
export function readEvents(runDir: string): Record<string, unknown>[] {
  const path = eventsFileOf(runDir);
  if (path === null) return [];
  if (path.endsWith('.arrow')) return [...arrowEvents(path, join(runDir, NOTES_FILE))];
  const buf = readFileSync(path);
  const text = (
    path.endsWith('.gz') ? gunzipSync(buf, { finishFlush: constants.Z_SYNC_FLUSH }) : buf
  ).toString('utf8');
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    const e = parseLine(line);
    if (e) out.push(e);
  }
  return out;
}
