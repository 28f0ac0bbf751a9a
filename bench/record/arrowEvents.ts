import { renameSync, writeFileSync } from 'node:fs';
import {
  Bool,
  Dictionary,
  Field,
  Float64,
  Int8,
  Int16,
  Int32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
  type Data,
  type DataType,
  type Vector,
} from 'apache-arrow';
import { CompressedFileWriter, EVENTS_COMPRESSION } from './arrowCodec.js';
import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { COL, EVENT_COLUMNS, EVENT_TYPES, FIELDS, KINDS, type ColumnSpec } from './eventColumns.js';
import type { EventSink } from './eventSink.js';

/** Rows per record batch: a few MB per flush, so a busy run costs a few writes a minute. */
export const BATCH_ROWS = 65536;

type Values = Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

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

function arrowType(c: ColumnSpec, id: number): DataType {
  switch (c.type) {
    case 'f64':
      return new Float64();
    case 'i32':
      return new Int32();
    case 'i16':
      return new Int16();
    case 'bool':
      return new Bool();
    case 'dict':
      return new Dictionary(new Utf8(), new Int8(), id);
  }
}

function newValues(c: ColumnSpec): Values {
  switch (c.type) {
    case 'f64':
      return new Float64Array(BATCH_ROWS);
    case 'i32':
      return new Int32Array(BATCH_ROWS);
    case 'i16':
      return new Int16Array(BATCH_ROWS);
    case 'bool':
      return new Uint8Array(BATCH_ROWS >> 3);
    case 'dict':
      return new Int8Array(BATCH_ROWS);
  }
}

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
 * events.arrow: an Apache Arrow IPC file (bodies LZ4-frame compressed), one record batch per BATCH_ROWS events, built
 * from one typed array (and one validity bitmap) per column. An attempt or an outcome
 * fills its row's cells straight from the Recorder's objects: no string, no object per
 * event. Each batch's arrays are fresh (the writer holds them until they are on disk).
 * Lines that do not fit the columns (EVENT_COLUMNS) go whole to events.notes.arrow.
 */
export class ArrowEventFile implements EventSink {
  private readonly schema: Schema;
  private readonly dictionaries: (Vector | undefined)[];
  private readonly writer = new CompressedFileWriter({ compressionType: EVENTS_COMPRESSION });
  private values: Values[] = [];
  private valid: Uint8Array[] = [];
  private row = 0;
  private rows = 0;
  private readonly notes: Note[] = [];
  private notesWritten = 0;

  constructor(
    path: string,
    private readonly notesPath: string,
  ) {
    this.schema = new Schema(EVENT_COLUMNS.map((c, i) => new Field(c.name, arrowType(c, i), c.name !== 'e')));
    this.dictionaries = EVENT_COLUMNS.map((c) =>
      c.values ? vectorFromArray([...c.values], new Utf8()) : undefined,
    );
    this.writer.open(path, this.schema);
    this.fresh();
  }

  private fresh(): void {
    this.values = EVENT_COLUMNS.map(newValues);
    this.valid = EVENT_COLUMNS.map(() => new Uint8Array(BATCH_ROWS >> 3));
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

  private flush(): void {
    const n = this.row;
    const children: Data[] = EVENT_COLUMNS.map((c, k) => {
      const type = this.schema.fields[k]!.type as DataType;
      const dictionary = this.dictionaries[k];
      const values = this.values[k]!;
      return makeData({
        type,
        length: n,
        data: c.type === 'bool' ? values : values.subarray(0, n),
        nullBitmap: this.valid[k]!,
        ...(dictionary ? { dictionary } : {}),
      } as Parameters<typeof makeData>[0]);
    });
    const data = makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children });
    this.writer.write(new RecordBatch(this.schema, data));
    this.rows += n;
    this.fresh();
    // The notes up to here, beside the batch: a run killed later keeps both (arrowRead.ts).
    if (this.notes.length > this.notesWritten) {
      writeNotes(this.notesPath, this.notes);
      this.notesWritten = this.notes.length;
    }
  }

  close(): Promise<void> {
    if (this.row > 0 || this.rows === 0) this.flush();
    this.writer.end();
    writeNotes(this.notesPath, this.notes);
    return Promise.resolve();
  }
}

interface Note {
  readonly seq: number;
  readonly e: string;
  readonly atMs: number | null;
  readonly json: string;
}

/**
 * events.notes.arrow (NOTE_COLUMNS): a few lines at most per second, written whole at each
 * batch and at the end; through a rename, so a kill mid-write leaves the previous one.
 */
function writeNotes(path: string, notes: readonly Note[]): void {
  const column = (k: keyof Note, type: DataType): Vector =>
    vectorFromArray(notes.map((x) => x[k]) as (number | string | null)[], type as never);
  const table = new Table({
    seq: column('seq', new Int32()),
    e: column('e', new Utf8()),
    atMs: column('atMs', new Float64()),
    json: column('json', new Utf8()),
  });
  writeFileSync(`${path}.part`, tableToIPC(table, 'file'));
  renameSync(`${path}.part`, path);
}
