import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnSync } from 'node:child_process';
import { gunzipSync } from 'node:zlib';
import { tableFromIPC } from 'apache-arrow';
import { seededRng } from '../../foundation/rng.js';
import { ipcBodies } from '../../test/helpers/arrowBodies.js';
import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { ArrowEventFile, BATCH_ROWS } from './arrowEvents.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { ipcBatches } from './arrowRead.js';
import { COL, EVENT_COLUMNS, EVENT_TYPES, FIELDS, KINDS } from './eventColumns.js';
import { attemptEvent, outcomeEvent } from './eventEncoding.js';
import {
  eachEvent,
  EVENTS_FILE,
  eventSink,
  eventsFileOf,
  NDJSON_EVENTS_FILE,
  NOTES_FILE,
  readEvents,
  type EventsMode,
} from './eventLog.js';

const EVENTS = [
  { e: 'attempt', origin: 1, n: 1, kind: 'ok', status: 200 },
  { e: 'outcome', origin: 1, kind: 'ok', attempts: 1 },
  { e: 'attempt', origin: 2, n: 1, kind: 'timeout', status: 0 },
  { e: 'outcome', origin: 2, kind: 'timeout', attempts: 1 },
  { e: 'trigger', action: 'apply', atMs: 1000 },
  { e: 'breaker', client: 0, from: 'closed', to: 'open', atMs: 1200 },
  { e: 'rejected', origin: 3, n: 2, by: 'throttle', atMs: 1300.25 },
];

async function write(mode: EventsMode, n = 1): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  const sink = eventSink(mode, dir);
  for (let i = 0; i < n; i++) for (const e of EVENTS) sink.write({ ...e, origin: i });
  await sink.close();
  return dir;
}

/** Attempts and outcomes with every optional field now and then, from a seeded draw. */
function* recorded(
  count: number,
  seed: number,
): Generator<[Attempt, AttemptResult] | [Origin, AttemptResult, OutcomeKind]> {
  const rng = seededRng(seed, 'events');
  for (let id = 0; id < count; id++) {
    const u = (): number => rng.next();
    const origin: Origin = {
      id,
      intendedMs: id * 1.0001 + u(),
      deadlineMs: 1e9,
      ...(u() < 0.2 ? { request: { cls: Math.floor(u() * 3), method: 'GET', path: '/' } } : {}),
    } as Origin;
    const kind = KINDS[Math.floor(u() * KINDS.length)]!;
    const sentMs = origin.intendedMs + u() * 3;
    const r: AttemptResult = {
      kind,
      status: kind === 'ok' ? 200 : 0,
      sentMs,
      endMs: sentMs + u() * 500,
      attempt: 1 + Math.floor(u() * 4),
      ...(u() < 0.1 ? { clientWaitMs: u() * 20 } : {}),
      ...(u() < 0.1
        ? {
            stream: {
              tokens: Math.floor(u() * 500),
              ttftMs: u() * 900,
              ...(u() < 0.5 ? { itlMs: u() * 9 } : {}),
            },
          }
        : {}),
    } as AttemptResult;
    const a: Attempt = {
      origin,
      number: r.attempt,
      ...(u() < 0.1 ? { hedge: true } : {}),
      ...(u() < 0.3 ? { replica: Math.floor(u() * 3) } : {}),
    };
    yield [a, r];
    yield [origin, r, u() < 0.5 ? kind : 'deadline-exceeded'];
  }
}

/**
 * Every `yieldEvery` events, a wait for the writer thread (arrowEvents.ts) to have written the
 * batches so far, as a run's turns of the event loop let its messages in: the batches' arrays come back.
 */
async function record(
  mode: EventsMode,
  count: number,
  yieldEvery = 0,
  writerThread?: boolean,
): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  const sink =
    writerThread === undefined
      ? eventSink(mode, dir)
      : new ArrowEventFile(join(dir, EVENTS_FILE), join(dir, NOTES_FILE), writerThread);
  let i = 0;
  for (const x of recorded(count, 7)) {
    if (x.length === 2) sink.attempt!(x[0], x[1]);
    else sink.outcome!(x[0], x[1], x[2]);
    if (++i % 5000 === 0) sink.write({ e: 'trigger', action: 'apply', atMs: i, name: `t${i}` });
    if (yieldEvery > 0 && i % yieldEvery === 0) await (sink as Partial<ArrowEventFile>).flushed?.();
  }
  await sink.close();
  return dir;
}

test('events.arrow holds what events.ndjson.gz holds: every attempt and outcome field, notes in their place', async () => {
  const count = BATCH_ROWS / 2 + 100; // two events each: two record batches
  const arrow = await record('all', count);
  const ndjson = await record('ndjson', count);
  assert.equal(eventsFileOf(arrow), join(arrow, EVENTS_FILE));
  assert.equal(eventsFileOf(ndjson), join(ndjson, NDJSON_EVENTS_FILE));
  const a = readEvents(arrow);
  const b = readEvents(ndjson);
  assert.equal(a.length, 2 * count + Math.floor((2 * count) / 5000));
  assert.equal(a.length, b.length);
  assert.deepEqual(a, b);
  // Read by Arrow's own reader: batches of BATCH_ROWS, the types and the notes table.
  const t = tableFromIPC(readFileSync(join(arrow, EVENTS_FILE)));
  assert.equal(t.numRows, 2 * count);
  assert.equal(t.batches.length, 2);
  assert.equal(t.getChild('origin')!.type.toString(), 'Int32');
  assert.equal(String(t.getChild('kind')!.get(1)), String(b[1]!['kind']));
  // Every batch's body is LZ4-frame compressed, each buffer's prefix its decompressed length.
  const bodies = ipcBodies(readFileSync(join(arrow, EVENTS_FILE)));
  assert.equal(bodies.batches, 2);
  assert.equal(bodies.compressed, 2);
  assert.ok(bodies.packedBuffers > 0);
  assert.equal(bodies.wrongPrefixes, 0);
  assert.ok(bodies.bodyBytes < bodies.rawBytes / 2, `${bodies.bodyBytes} of ${bodies.rawBytes} bytes`);
  const notes = tableFromIPC(readFileSync(join(arrow, NOTES_FILE)));
  assert.equal(notes.numRows, Math.floor((2 * count) / 5000));
  assert.equal(notes.getChild('seq')!.get(0), 5000);
  let streamed = 0;
  for await (const e of eachEvent(arrow)) if (e['e']) streamed++;
  assert.equal(streamed, a.length);
});

test('events.ndjson.gz (--events ndjson): gzip-compressed, read back line for line', async () => {
  const dir = await write('ndjson', 5000);
  const path = join(dir, NDJSON_EVENTS_FILE);
  const raw = readFileSync(path);
  assert.deepEqual([...raw.subarray(0, 2)], [0x1f, 0x8b], 'gzip magic');
  const text = gunzipSync(raw).toString('utf8');
  assert.ok(raw.length * 5 < text.length, `compressed ${raw.length} of ${text.length} bytes`);
  const back = readEvents(dir);
  assert.equal(back.length, 5000 * EVENTS.length);
  assert.deepEqual(
    back.slice(0, EVENTS.length),
    EVENTS.map((e) => ({ ...e, origin: 0 })),
  );
  let streamed = 0;
  for await (const e of eachEvent(dir)) if (e['e']) streamed++;
  assert.equal(streamed, back.length);
});

test('lines written whole come back whole from Arrow, in order; a field the columns lack makes a note', async () => {
  const dir = await write('all', 3);
  assert.deepEqual(
    readEvents(dir),
    [0, 1, 2].flatMap((i) => EVENTS.map((e) => ({ ...e, origin: i }))),
  );
  const odd = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  const sink = eventSink('all', odd);
  const lines = [
    { e: 'attempt', origin: 1, n: 1, kind: 'ok', status: 200, extra: 'x' },
    { e: 'attempt', origin: 2, n: 1, kind: 'no-such-kind', status: 0 },
    { e: 'outcome', origin: 3, endMs: 0.5, kind: 'ok', attempts: 1 },
    { e: 'attempt', origin: 2 ** 40, n: 1 },
  ];
  for (const l of lines) sink.write(l);
  await sink.close();
  assert.deepEqual(readEvents(odd), lines);
  assert.equal(tableFromIPC(readFileSync(join(odd, NOTES_FILE))).numRows, 3);
});

test('--events failures keeps every line but the successful attempts and outcomes; none writes no file', async () => {
  const kept = readEvents(await write('failures'));
  assert.deepEqual(
    kept.map((e) => `${String(e['e'])}:${String(e['kind'] ?? '')}`),
    ['attempt:timeout', 'outcome:timeout', 'trigger:', 'breaker:', 'rejected:'],
  );
  const recordedFailures = readEvents(await record('failures', 1000));
  assert.ok(recordedFailures.length > 0);
  assert.ok(recordedFailures.every((e) => e['kind'] !== 'ok'));
  const none = await write('none');
  assert.equal(eventsFileOf(none), null);
  assert.equal(existsSync(join(none, EVENTS_FILE)), false);
  assert.deepEqual(readEvents(none), []);
});

test('an older results folder (events.ndjson, uncompressed, a torn last line) is read the same way', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  writeFileSync(join(dir, 'events.ndjson'), EVENTS.map((e) => JSON.stringify(e)).join('\n') + '\n{"e":"att');
  assert.equal(eventsFileOf(dir), join(dir, 'events.ndjson'));
  assert.deepEqual(readEvents(dir), EVENTS);
  const streamed: unknown[] = [];
  for await (const e of eachEvent(dir)) streamed.push(e);
  assert.deepEqual(streamed, EVENTS);
});

// A run killed outright (SIGKILL) never writes events.arrow's footer. A child process writes two
// whole batches and part of a third, with notes among them, and kills itself once the writer
// thread has written the whole ones: what it flushed must read back, row for row.
test('a run killed outright keeps its event log: every whole batch and the notes flushed with them read back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-killed-'));
  const rows = 2 * BATCH_ROWS + 999;
  const notes = new Map([
    [10, { e: 'trigger', action: 'apply', atMs: 1000 }],
    [BATCH_ROWS + 5, { e: 'trigger', action: 'undo', atMs: 2000 }],
    [2 * BATCH_ROWS + 500, { e: 'trigger', action: 'lost', atMs: 3000 }],
  ]);
  const script = `
    import { ArrowEventFile } from ${JSON.stringify(new URL('./arrowEvents.js', import.meta.url).href)};
    const sink = new ArrowEventFile(${JSON.stringify(join(dir, EVENTS_FILE))}, ${JSON.stringify(join(dir, NOTES_FILE))});
    const notes = new Map(${JSON.stringify([...notes])});
    for (let i = 0; i < ${rows}; i++) {
      if (notes.has(i)) sink.write(notes.get(i));
      sink.write({ e: 'attempt', origin: i, n: 1, kind: 'ok', status: 200 });
    }
    // The full batches are written on a thread of their own: the kill comes once they are in the file.
    await sink.flushed();
    process.kill(process.pid, 'SIGKILL');`;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(child.signal, 'SIGKILL', child.stderr);
  const bytes = readFileSync(join(dir, EVENTS_FILE));
  assert.notEqual(
    bytes.subarray(bytes.byteLength - 6).toString('latin1'),
    'ARROW1',
    'no footer: the kill came first',
  );
  assert.equal(ipcBatches(join(dir, EVENTS_FILE)).complete, false);

  const lines = readEvents(dir);
  assert.equal(lines.length, 2 * BATCH_ROWS + 2, 'two whole batches and the two notes flushed with them');
  let origin = 0;
  for (const [i, line] of lines.entries()) {
    const note = notes.get(origin);
    if (note && line['e'] === 'trigger') {
      assert.deepEqual(line, note, `line ${i}`);
      continue;
    }
    assert.deepEqual(line, { e: 'attempt', origin, n: 1, kind: 'ok', status: 200 }, `line ${i}`);
    origin++;
  }
  assert.equal(origin, 2 * BATCH_ROWS);

  // A kill in the middle of writing a batch: the whole ones before it still read.
  writeFileSync(join(dir, EVENTS_FILE), bytes.subarray(0, bytes.byteLength - 100));
  const cut = readEvents(dir).filter((l) => l['e'] === 'attempt');
  assert.equal(cut.length, BATCH_ROWS);
  assert.equal(cut[BATCH_ROWS - 1]!['origin'], BATCH_ROWS - 1);
});

// From the first full batch on, batches are built, compressed and written on a writer thread,
// their arrays moved there and back (arrowEvents.ts). Six full batches and a partial one, read
// by Arrow's own reader: each batch in its place, every cell of every column what was recorded,
// null (over a 0) where nothing was: a recycled array that kept a value would show here.
test("the writer thread loses, reorders and alters no batch: every cell read back by Arrow's reader", async () => {
  const count = 3 * BATCH_ROWS + 1234;
  const dir = await record('all', count, 10_000, true);
  const expected: Record<string, unknown>[] = [];
  for (const x of recorded(count, 7))
    expected.push((x.length === 2 ? attemptEvent(x[0], x[1]) : outcomeEvent(x[0], x[1], x[2])) as never);
  const t = tableFromIPC(readFileSync(join(dir, EVENTS_FILE)));
  assert.deepEqual(
    t.batches.map((b) => b.numRows),
    [...Array<number>(6).fill(BATCH_ROWS), 2 * count - 6 * BATCH_ROWS],
  );
  let row = 0;
  let cells = 0;
  for (const batch of t.batches) {
    const cols = EVENT_COLUMNS.map((c) => batch.getChild(c.name)!.data[0]!);
    for (let i = 0; i < batch.numRows; i++, row++) {
      const line = expected[row]!;
      const type = EVENT_TYPES.indexOf(line['e'] as never);
      const want: unknown[] = EVENT_COLUMNS.map(() => null);
      want[COL['e']!] = line['e'];
      for (const [field, column] of FIELDS[EVENT_TYPES[type]!])
        if (line[field] !== undefined) want[COL[column]!] = line[field];
      for (const [k, d] of cols.entries()) {
        const spec = EVENT_COLUMNS[k]!;
        let got: unknown = null;
        const v =
          spec.type === 'bool' ? (d.values[i >> 3]! >> (i & 7)) & 1 : (d.values as ArrayLike<number>)[i]!;
        if (d.getValid(i)) got = spec.type === 'bool' ? true : spec.type === 'dict' ? spec.values![v] : v;
        // Under a null, 0: what a fresh array holds (the file is byte for byte the one-thread writer's).
        else if (v !== 0) got = `${v} under a null`;
        if (got !== want[k])
          assert.fail(`row ${row}, column ${spec.name}: ${String(got)}, not ${String(want[k])}`);
        cells++;
      }
    }
  }
  assert.equal(row, 2 * count);
  assert.equal(cells, 2 * count * EVENT_COLUMNS.length);
});

// Without a core to spare (sweep --jobs 2 on two cores) each full batch is written on the
// recording thread as it fills, into the same arrays cleared: the same bytes as the writer
// thread's, the notes too.
test('events.arrow written without the writer thread is byte for byte the one written with it', async () => {
  const count = 2 * BATCH_ROWS + 777;
  const files = await Promise.all(
    [true, false].map(async (writerThread) => {
      const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-here-'));
      const sink = new ArrowEventFile(join(dir, EVENTS_FILE), join(dir, NOTES_FILE), writerThread);
      let i = 0;
      for (const x of recorded(count, 11)) {
        if (x.length === 2) sink.attempt(x[0], x[1]);
        else sink.outcome(x[0], x[1], x[2]);
        if (++i % 7000 === 0) sink.write({ e: 'trigger', action: 'apply', atMs: i, name: `t${i}` });
      }
      await sink.close();
      return dir;
    }),
  );
  const [thread, here] = files as [string, string];
  assert.equal(tableFromIPC(readFileSync(join(here, EVENTS_FILE))).batches.length, 5);
  assert.ok(readFileSync(join(here, EVENTS_FILE)).equals(readFileSync(join(thread, EVENTS_FILE))));
  assert.ok(readFileSync(join(here, NOTES_FILE)).equals(readFileSync(join(thread, NOTES_FILE))));
  assert.deepEqual(readEvents(here), readEvents(thread));
});

// A write that fails on the writer thread (here the file outgrows the process's file-size
// limit at its first batch; 212,000 origins: a run on a thread of its own, where the writer
// thread starts) is the run's error, said for a person: what the run measured is
// still written, and it exits as an unusable run, without a stack trace.
test(
  'an event log the writer thread cannot write fails the run with a plain message',
  { skip: process.platform === 'win32' },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-unwritable-'));
    const file = join(dir, 'mid.yaml');
    writeFileSync(
      file,
      `name: mid
lab:
  api: { workers: 100, work: { dist: exponential, mean: 20ms }, queue: fifo }
load: { arrival: poisson, rate: 1000/s }
client: { timeout: 500ms }
schedule: { warmup: 1s, baseline: 200s, trigger: { kind: pause, target: api, duration: 1s }, observe: 10s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`,
    );
    const cli = fileURLToPath(new URL('../../orchestrator/cli/main.js', import.meta.url));
    const out = join(dir, 'out');
    // 1024 blocks of 512 bytes: the file's start fits, its first batch (about 1 MB) does not.
    const run = `ulimit -f 1024; exec "${process.execPath}" "${cli}" run "${file}" --runtime sim --quiet --report none --out "${out}"`;
    const r = spawnSync('sh', ['-c', run], { encoding: 'utf8' });
    assert.equal(r.status, ExitCode.unusable, r.stderr);
    assert.match(
      r.stderr,
      /^metabench: the event log \S+events\.arrow could not be written: EFBIG: file too large, write\nhint: /,
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    assert.ok(existsSync(join(out, 'run-1', 'summary.json')), 'what the run measured is kept');
  },
);
