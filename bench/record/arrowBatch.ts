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
import { EVENT_COLUMNS, type ColumnSpec } from './eventColumns.js';

/**
 * The writing half of events.arrow, shared by the recorder's thread (a short run's one batch)
 * and the writer thread (arrowWriterThread.ts): record batches from filled column arrays,
 * compressed and written; the notes table beside them.
 */

/** Rows per record batch: a few MB per flush, so a busy run costs a few writes a minute. */
export const BATCH_ROWS = 65536;

export type Values = Float64Array | Int32Array | Int16Array | Int8Array | Uint8Array;

/** One batch's columns: a value array and a validity bitmap per column of EVENT_COLUMNS. */
export interface Columns {
  readonly values: Values[];
  readonly valid: Uint8Array[];
}

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

/** A batch's columns, all zero (null). */
export function newColumns(): Columns {
  return {
    values: EVENT_COLUMNS.map(newValues),
    valid: EVENT_COLUMNS.map(() => new Uint8Array(BATCH_ROWS >> 3)),
  };
}

/** Columns back to all zero, for another batch. */
export function clearColumns(c: Columns): void {
  for (const v of c.values) v.fill(0);
  for (const v of c.valid) v.fill(0);
}

/** A batch's arrays' buffers: moved, not copied, between the threads (each array has its own). */
export function transferList(c: Columns): ArrayBuffer[] {
  return [...c.values, ...c.valid].map((v) => v.buffer as ArrayBuffer);
}

/** events.arrow's writer on an open file: its schema written at open unless `resumeAt` says it is. */
export class EventBatchWriter {
  private readonly schema: Schema;
  private readonly dictionaries: (Vector | undefined)[];
  private readonly writer = new CompressedFileWriter({ compressionType: EVENTS_COMPRESSION });

  constructor(fd: number, resumeAt?: number) {
    this.schema = new Schema(EVENT_COLUMNS.map((c, i) => new Field(c.name, arrowType(c, i), c.name !== 'e')));
    this.dictionaries = EVENT_COLUMNS.map((c) =>
      c.values ? vectorFromArray([...c.values], new Utf8()) : undefined,
    );
    this.writer.open(fd, this.schema, resumeAt);
  }

  /** Bytes written so far. */
  get position(): number {
    return this.writer.position;
  }

  /** The first `n` rows of `columns`, as one record batch: in the file when this returns. */
  write(columns: Columns, n: number): void {
    const children: Data[] = EVENT_COLUMNS.map((c, k) => {
      const type = this.schema.fields[k]!.type as DataType;
      const dictionary = this.dictionaries[k];
      const values = columns.values[k]!;
      return makeData({
        type,
        length: n,
        data: c.type === 'bool' ? values : values.subarray(0, n),
        nullBitmap: columns.valid[k]!,
        ...(dictionary ? { dictionary } : {}),
      } as Parameters<typeof makeData>[0]);
    });
    const data = makeData({ type: new Struct(this.schema.fields), length: n, nullCount: 0, children });
    this.writer.write(new RecordBatch(this.schema, data));
  }

  /** The footer (the descriptor stays open: its opener closes it). */
  end(): void {
    this.writer.end();
  }
}

export interface Note {
  readonly seq: number;
  readonly e: string;
  readonly atMs: number | null;
  readonly json: string;
}

/**
 * events.notes.arrow (NOTE_COLUMNS): a few lines at most per second, written whole at each
 * batch and at the end; through a rename, so a kill mid-write leaves the previous one.
 */
export function writeNotes(path: string, notes: readonly Note[]): void {
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
