import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { EVENTS_FILE, eventLines, eventSink, eventsFileOf, NdjsonFile, readEvents } from './eventLog.js';

const EVENTS = [
  { e: 'attempt', origin: 1, n: 1, kind: 'ok', status: 200 },
  { e: 'outcome', origin: 1, kind: 'ok', attempts: 1 },
  { e: 'attempt', origin: 2, n: 1, kind: 'timeout', status: 0 },
  { e: 'outcome', origin: 2, kind: 'timeout', attempts: 1 },
  { e: 'trigger', action: 'apply', atMs: 1000 },
  { e: 'breaker', client: 0, from: 'closed', to: 'open', atMs: 1200 },
];

async function write(mode: 'all' | 'failures' | 'none', n = 1): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  const sink = eventSink(mode, () => new NdjsonFile(join(dir, EVENTS_FILE)));
  // Enough lines to cross the 64 KiB batch several times.
  for (let i = 0; i < n; i++) for (const e of EVENTS) sink.write({ ...e, origin: i });
  await sink.close();
  return dir;
}

test('events.ndjson.gz: what is written is gzip-compressed and reads back line for line', async () => {
  const dir = await write('all', 5000);
  const path = join(dir, EVENTS_FILE);
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
  for await (const line of eventLines(path)) if (JSON.parse(line)) streamed++;
  assert.equal(streamed, back.length);
});

test('--events failures keeps every line but the successful attempts and outcomes; none writes no file', async () => {
  const kept = readEvents(await write('failures'));
  assert.deepEqual(
    kept.map((e) => `${String(e['e'])}:${String(e['kind'] ?? '')}`),
    ['attempt:timeout', 'outcome:timeout', 'trigger:', 'breaker:'],
  );
  const none = await write('none');
  assert.equal(eventsFileOf(none), null);
  assert.deepEqual(readEvents(none), []);
});

test('an older results folder (events.ndjson, uncompressed, a torn last line) is read the same way', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'figures-eventlog-'));
  writeFileSync(join(dir, 'events.ndjson'), EVENTS.map((e) => JSON.stringify(e)).join('\n') + '\n{"e":"att');
  assert.equal(eventsFileOf(dir), join(dir, 'events.ndjson'));
  assert.deepEqual(readEvents(dir), EVENTS);
  const lines: string[] = [];
  for await (const l of eventLines(join(dir, 'events.ndjson'))) lines.push(l);
  assert.equal(lines.length, EVENTS.length + 1);
});
