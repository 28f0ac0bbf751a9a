import { parentPort, workerData } from 'node:worker_threads';
import { EventBatchWriter, transferList, writeNotes, type Columns, type Note } from './arrowBatch.js';

/**
 * events.arrow's writer thread (arrowEvents.ts starts it): builds, compresses and writes each
 * batch the recorder's thread hands over, off that thread. Messages, in order:
 *   in   { columns, n, notes }  a batch (its arrays transferred) and the notes since the last
 *        { end: true, notes }   the last notes: the footer, then the notes file
 *   out  { columns }            a batch's arrays back once written, for the next batch
 *        { done: true }         the footer written
 *        { error }              a write failed: nothing more is written
 */
export interface WriterThreadData {
  /** events.arrow, opened by the recorder's thread, which closes it. */
  readonly fd: number;
  /** Where the file's start (magic and schema, written by the recorder's thread) ends. */
  readonly position: number;
  readonly notesPath: string;
}

export type ToWriter =
  | { readonly columns: Columns; readonly n: number; readonly notes: Note[] }
  | { readonly end: true; readonly notes: Note[] };

export type FromWriter = { readonly columns: Columns } | { readonly done: true } | { readonly error: string };

const data = workerData as WriterThreadData;
const port = parentPort!;
const notes: Note[] = [];
let writer: EventBatchWriter | undefined;
let failed = false;

port.on('message', (m: ToWriter) => {
  if (failed) return;
  try {
    writer ??= new EventBatchWriter(data.fd, data.position);
    notes.push(...m.notes);
    if ('end' in m) {
      writer.end();
      writeNotes(data.notesPath, notes);
      port.postMessage({ done: true } satisfies FromWriter);
      port.close();
      return;
    }
    writer.write(m.columns, m.n);
    // The notes up to here, beside the batch: a run killed later keeps both (arrowRead.ts).
    if (m.notes.length > 0) writeNotes(data.notesPath, notes);
    port.postMessage({ columns: m.columns } satisfies FromWriter, transferList(m.columns));
  } catch (err) {
    failed = true;
    port.postMessage({ error: (err as Error)?.message ?? String(err) } satisfies FromWriter);
    port.close();
  }
});
