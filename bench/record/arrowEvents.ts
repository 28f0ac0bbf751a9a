import { closeSync, openSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { BenchError } from '../../foundation/errors.js';
import { coreToSpare } from '../../foundation/workers.js';
import {
  BATCH_ROWS,
  clearColumns,
  EventBatchWriter,
  newColumns,
  transferList,
  writeNotes,
  type Columns,
  type Note,
  type Values,
} from './arrowBatch.js';
import type { FromWriter, ToWriter, WriterThreadData } from './arrowWriterThread.js';
import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { COL, EVENT_COLUMNS, EVENT_TYPES, FIELDS, KINDS, type ColumnSpec } from './eventColumns.js';
import type { EventSink } from './eventSink.js';

export { BATCH_ROWS } from './arrowBatch.js';

const ATTEMPT = EVENT_TYPES.indexOf('attempt');
const OUTCOME = EVENT_TYPES.indexOf('outcome');
const KIND_INDEX: Readonly<Record<string, number>> = Object.fromEntries(KINDS.map((k, i) => [k, i]));

const C_E = COL['e']!;
const C_ORIGIN = COL['origin']!;
const C_CLS = COL['cls']!;
const C_N = COL['n']!;
const C_INTENDED = COL['intendedMs']!;
const C_SENT = COL['sentMs']!;
const C_END = COL['endMs']!;
const C_KIND = COL['kind']!;
const C_STATUS = COL['status']!;
const C_WAIT = COL['clientWaitMs']!;
const C_HEDGE = COL['hedge']!;
const C_REPLICA = COL['replica']!;
const C_TOKENS = COL['tokens']!;
const C_TTFT = COL['ttftMs']!;
const C_ITL = COL['itlMs']!;

const WRITER_THREAD = new URL('./arrowWriterThread.js', import.meta.url);

/** µs, as events.ndjson writes them. */
function us(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** The range an integer column holds. */
const INT_RANGE: Partial<Record<ColumnSpec['type'], readonly [number, number]>> = {
  i32: [-(2 ** 31), 2 ** 31 - 1],
  i16: [-(2 ** 15), 2 ** 15 - 1],
};

/**
 * events.arrow: an Apache Arrow IPC file (bodies LZ4-frame compressed), one record batch per
 * BATCH_ROWS events, built from one typed array (and one validity bitmap) per column. An
 * attempt or an outcome fills its row's cells straight from the Recorder's objects: no
 * string, no object per event. Lines that do not fit the columns (EVENT_COLUMNS) go whole to
 * events.notes.arrow.
 *
 * Building, compressing and writing a batch cost a busy run about a second of its thread (pure
 * JS LZ4), so from the first full batch on they are a writer thread's (arrowWriterThread.ts):
 * each full batch's arrays are moved there, not copied, and come back for a later batch once
 * written. A run that never fills a batch pays no thread: its one batch is written here at
 * the end. This thread opens the file and writes its start; a batch is in the file once the
 * writer thread has written it, so a run killed outright loses the batches still in flight.
 */
export class ArrowEventFile implements EventSink {
  private readonly fd: number;
  /** This thread's writer: the file's start, and a run's one batch and footer when it has no thread. */
  private readonly writer: EventBatchWriter;
  private columns!: Columns;
  private values!: Values[];
  private valid!: Uint8Array[];
  private row = 0;
  private rows = 0;
  private readonly notes: Note[] = [];
  /** Notes handed to the writer thread (or written) so far. */
  private notesWritten = 0;
  private thread: Worker | undefined;
  /** Batches' arrays the writer thread gave back. */
  private readonly spare: Columns[] = [];
  /** Settled when the writer thread has written the footer, or failed. */
  private ended: Promise<void> | undefined;
  /** Settled when the writer thread is gone (the file descriptor may then be closed). */
  private exited: Promise<void> | undefined;
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;
  /** Batches handed to the writer thread, and how many it has written. */
  private sent = 0;
  private written = 0;
  private waiting: { readonly upTo: number; readonly resolve: () => void }[] = [];

  /**
   * `writerThread`: whether full batches go to a writer thread (default: when this process has
   * a core to spare, coreToSpare); without one each is written here as it fills.
   */
  constructor(
    private readonly path: string,
    private readonly notesPath: string,
    private readonly writerThread = coreToSpare(),
  ) {
    try {
      this.fd = openSync(path, 'w');
    } catch (err) {
      throw unwritable(path, (err as Error).message);
    }
    try {
      this.writer = new EventBatchWriter(this.fd);
    } catch (err) {
      closeSync(this.fd);
      throw unwritable(path, (err as Error).message);
    }
    this.take();
  }

  /** A batch's arrays for the next rows: given back by the writer thread, else new. */
  private take(): void {
    const spare = this.spare.pop();
    if (spare) clearColumns(spare);
    this.columns = spare ?? newColumns();
    this.values = this.columns.values;
    this.valid = this.columns.valid;
    this.row = 0;
  }

  private setF(c: number, i: number, v: number): void {
    (this.values[c] as Float64Array)[i] = v;
    this.valid[c]![i >> 3]! |= 1 << (i & 7);
  }

  private setI(c: number, i: number, v: number): void {
    (this.values[c] as Int32Array | Int16Array | Int8Array)[i] = v;
    this.valid[c]![i >> 3]! |= 1 << (i & 7);
  }

  private next(): void {
    if (++this.row === BATCH_ROWS) this.flush();
  }

  attempt(a: Attempt, r: AttemptResult): void {
    const i = this.row;
    this.setI(C_E, i, ATTEMPT);
    this.setI(C_ORIGIN, i, a.origin.id);
    if (a.origin.request) this.setI(C_CLS, i, a.origin.request.cls);
    this.setI(C_N, i, a.number);
    this.setF(C_INTENDED, i, us(a.origin.intendedMs));
    this.setF(C_SENT, i, us(r.sentMs));
    this.setF(C_END, i, us(r.endMs));
    this.setI(C_KIND, i, KIND_INDEX[r.kind]!);
    this.setI(C_STATUS, i, r.status);
    if (r.clientWaitMs) this.setF(C_WAIT, i, us(r.clientWaitMs));
    if (a.hedge) this.setBool(C_HEDGE, i);
    if (a.replica !== undefined) this.setI(C_REPLICA, i, a.replica);
    if (r.stream) {
      this.setI(C_TOKENS, i, r.stream.tokens);
      if (r.stream.ttftMs !== undefined) this.setF(C_TTFT, i, us(r.stream.ttftMs));
      if (r.stream.itlMs !== undefined) this.setF(C_ITL, i, us(r.stream.itlMs));
    }
    this.next();
  }

  outcome(o: Origin, r: AttemptResult, kind: OutcomeKind): void {
    const i = this.row;
    this.setI(C_E, i, OUTCOME);
    this.setI(C_ORIGIN, i, o.id);
    this.setF(C_INTENDED, i, us(o.intendedMs));
    this.setF(C_END, i, us(r.endMs));
    this.setI(C_KIND, i, KIND_INDEX[kind]!);
    this.setI(C_N, i, r.attempt);
    this.next();
  }

  private setBool(c: number, i: number): void {
    this.values[c]![i >> 3]! |= 1 << (i & 7);
    this.valid[c]![i >> 3]! |= 1 << (i & 7);
  }

  /** Any other line: a row when every field fits its event type's columns, else a note. */
  write(event: object): void {
    const line = event as Record<string, unknown>;
    const type = EVENT_TYPES.indexOf(line['e'] as (typeof EVENT_TYPES)[number]);
    if (type < 0 || !this.fits(line, EVENT_TYPES[type]!)) {
      const at = line['atMs'];
      this.notes.push({
        seq: this.rows + this.row,
        e: String(line['e']),
        atMs: typeof at === 'number' ? at : null,
        json: JSON.stringify(event),
      });
      return;
    }
    const i = this.row;
    this.setI(C_E, i, type);
    for (const [field, column] of FIELDS[EVENT_TYPES[type]!]) {
      const v = line[field];
      if (v === undefined) continue;
      const c = COL[column]!;
      const spec = EVENT_COLUMNS[c]!;
      if (spec.type === 'f64') this.setF(c, i, v as number);
      else if (spec.type === 'bool') this.setBool(c, i);
      else if (spec.type === 'dict') this.setI(c, i, spec.values!.indexOf(v as string));
      else this.setI(c, i, v as number);
    }
    this.next();
  }

  /** Whether the columns hold every field of this line exactly. */
  private fits(line: Record<string, unknown>, type: (typeof EVENT_TYPES)[number]): boolean {
    const fields = FIELDS[type];
    for (const [field, v] of Object.entries(line)) {
      if (field === 'e') continue;
      const f = fields.find(([name]) => name === field);
      if (!f) return false;
      const spec = EVENT_COLUMNS[COL[f[1]]!]!;
      const range = INT_RANGE[spec.type];
      if (spec.type === 'f64' && typeof v !== 'number') return false;
      if (spec.type === 'bool' && v !== true) return false;
      if (spec.type === 'dict' && !spec.values!.includes(v as string)) return false;
      if (range && !(Number.isInteger(v) && (v as number) >= range[0] && (v as number) <= range[1]))
        return false;
    }
    return true;
  }

  /** A full batch: to the writer thread, started at the first; or written here, without one. */
  private flush(): void {
    if (this.failure) {
      // The file is lost: close() reports why (a throw here would fail whichever callback recorded the row).
      clearColumns(this.columns);
      this.rows += this.row;
      this.row = 0;
      return;
    }
    if (!this.writerThread) {
      try {
        this.writer.write(this.columns, this.row);
        // The notes up to here, beside the batch: a run killed later keeps both (arrowRead.ts).
        if (this.notes.length > this.notesWritten) {
          writeNotes(this.notesPath, this.notes);
          this.notesWritten = this.notes.length;
        }
      } catch (err) {
        this.fail((err as Error).message);
      }
      this.rows += this.row;
      this.row = 0;
      clearColumns(this.columns);
      return;
    }
    this.thread ??= this.startThread();
    this.send({ columns: this.columns, n: this.row, notes: this.newNotes() });
    this.rows += this.row;
    this.take();
  }

  /**
   * Settled once every full batch so far is in the file (with the notes before it), as it is
   * when a batch is written on this thread: for a caller that must know what a kill now keeps.
   */
  flushed(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.written >= this.sent) return Promise.resolve();
    return Promise.race([
      new Promise<void>((resolve) => this.waiting.push({ upTo: this.sent, resolve })),
      this.ended!,
    ]);
  }

  private newNotes(): Note[] {
    const notes = this.notes.slice(this.notesWritten);
    this.notesWritten = this.notes.length;
    return notes;
  }

  private send(m: ToWriter): void {
    if ('columns' in m) this.sent++;
    this.thread!.postMessage(m, 'columns' in m ? transferList(m.columns) : []);
  }

  private startThread(): Worker {
    const data: WriterThreadData = { fd: this.fd, position: this.writer.position, notesPath: this.notesPath };
    // This process's flags (--cpu-prof and the like), less one a thread refuses (`node --input-type=module -e`).
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
    const thread = new Worker(WRITER_THREAD, { workerData: data, execArgv });
    this.ended = new Promise<void>((resolve, reject) => {
      thread.on('message', (m: FromWriter) => {
        if ('columns' in m) this.returned(m.columns);
        else if ('done' in m) resolve();
        else reject(this.fail(m.error));
      });
      thread.on('error', (err) => reject(this.fail(err.message)));
      // After `done` this changes nothing; before it, the thread died.
      thread.on('exit', () => reject(this.fail('its writer thread stopped')));
    });
    // Reported by close().
    this.ended.catch(() => undefined);
    this.exited = new Promise((resolve) => thread.once('exit', () => resolve()));
    return thread;
  }

  /** The run's error for a write that failed: said for a person, with no stack trace (the first one kept). */
  private fail(message: string): Error {
    return (this.failure ??= unwritable(this.path, message));
  }

  private returned(columns: Columns): void {
    this.spare.push(columns);
    this.written++;
    if (this.waiting.length === 0) return;
    for (const w of this.waiting) if (w.upTo <= this.written) w.resolve();
    this.waiting = this.waiting.filter((w) => w.upTo > this.written);
  }

  close(): Promise<void> {
    if (this.thread) return (this.closing ??= this.closeThread());
    // No thread: the one batch (empty if the run recorded nothing), the footer and the notes, here.
    try {
      this.writer.write(this.columns, this.row);
      this.rows += this.row;
      this.row = 0;
      this.writer.end();
      writeNotes(this.notesPath, this.notes);
    } catch (err) {
      return Promise.reject(this.fail((err as Error).message));
    } finally {
      closeSync(this.fd);
    }
    return Promise.resolve();
  }

  private async closeThread(): Promise<void> {
    try {
      if (!this.failure) {
        if (this.row > 0) {
          this.send({ columns: this.columns, n: this.row, notes: this.newNotes() });
          this.rows += this.row;
          this.row = 0;
        }
        this.send({ end: true, notes: this.newNotes() });
      }
      await this.ended;
    } finally {
      await this.exited;
      closeSync(this.fd);
    }
  }
}

function unwritable(path: string, message: string): BenchError {
  return new BenchError(
    'E_RUN_UNUSABLE',
    `the event log ${path} could not be written: ${message}`,
    'check the space and permissions of the run folder, or run with --events none',
  );
}
