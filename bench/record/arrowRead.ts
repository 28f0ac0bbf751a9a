import { existsSync, readFileSync } from 'node:fs';
import { tableFromIPC, type Data } from 'apache-arrow';
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
  for (const batch of tableFromIPC(readFileSync(path)).batches) {
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
