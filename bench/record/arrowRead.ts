import { existsSync, readFileSync } from 'node:fs';
import { RecordBatchReader, tableFromIPC, type Data, type RecordBatch } from 'apache-arrow';
import './arrowCodec.js';
import { COL, EVENT_COLUMNS, EVENT_TYPES, FIELDS } from './eventColumns.js';

interface Note {
  readonly seq: number;
  readonly line: Record<string, unknown>;
}

function readNotes(path: string): Note[] {
  if (!existsSync(path)) return [];
  const t = tableFromIPC(readFileSync(path));
  const seq = t.getChild('seq');
  const json = t.getChild('json');
  const out: Note[] = [];
  for (let i = 0; i < t.numRows; i++)
    out.push({
      seq: seq!.get(i) as number,
      line: JSON.parse(json!.get(i) as string) as Record<string, unknown>,
    });
  return out;
}

const MAGIC = 'ARROW1';
/** The file format's leading magic and its padding: what comes after is an IPC stream. */
const STREAM_START = 8;

/**
 * The record batches of an Arrow IPC file. A run killed outright (SIGKILL, power loss) leaves
 * events.arrow without its footer: the batches already on disk are then read as the IPC stream
 * they are (the file format is a stream between a leading magic and a footer), up to the last
 * whole one; a batch cut short by the kill is dropped. `complete` says which case it was.
 */
export function ipcBatches(path: string): { batches: RecordBatch[]; complete: boolean } {
  const bytes = readFileSync(path);
  if (bytes.byteLength >= 12 && bytes.subarray(bytes.byteLength - MAGIC.length).toString('latin1') === MAGIC)
    return { batches: tableFromIPC(bytes).batches, complete: true };
  const batches: RecordBatch[] = [];
  if (bytes.byteLength <= STREAM_START) return { batches, complete: false };
  try {
    for (const b of RecordBatchReader.from(bytes.subarray(STREAM_START))) batches.push(b);
  } catch {
    // the batch the kill cut short: every one before it is whole
  }
  return { batches, complete: false };
}

/** A cell's value as its ndjson line has it; undefined when null. */
function cell(d: Data, k: number, i: number): unknown {
  if (!d.getValid(i)) return undefined;
  const spec = EVENT_COLUMNS[k]!;
  if (spec.type === 'bool') return true;
  const v = (d.values as ArrayLike<number>)[i]!;
  return spec.type === 'dict' ? spec.values![v] : v;
}

/**
 * The events of events.arrow and its notes table, in the order they were written, each
 * as the object of its ndjson line (eventColumns.ts's FIELDS, read backwards).
 */
export function* arrowEvents(path: string, notesPath: string): Generator<Record<string, unknown>> {
  const notes = readNotes(notesPath);
  let next = 0;
  let row = 0;
  const fields = EVENT_TYPES.map((t) => FIELDS[t].map(([field, column]) => [field, COL[column]!] as const));
  for (const batch of ipcBatches(path).batches) {
    const cols = EVENT_COLUMNS.map((c) => batch.getChild(c.name)!.data[0]!);
    for (let i = 0; i < batch.numRows; i++, row++) {
      while (next < notes.length && notes[next]!.seq <= row) yield notes[next++]!.line;
      const type = (cols[COL['e']!]!.values as Int8Array)[i]!;
      const line: Record<string, unknown> = { e: EVENT_TYPES[type] };
      for (const [field, k] of fields[type]!) {
        const v = cell(cols[k]!, k, i);
        if (v !== undefined) line[field] = v;
      }
      yield line;
    }
  }
  while (next < notes.length) yield notes[next++]!.line;
}
