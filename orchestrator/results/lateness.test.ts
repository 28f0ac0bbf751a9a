import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { decodeLateness, encodeLateness, LATENESS_FILE, readLateness, writeLateness } from './lateness.js';

test('lateness.bin.gz round-trips every lag, NaN (no first attempt) and Infinity (unsent) included', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-lateness-'));
  assert.equal(readLateness(dir), null);
  const lags = Float32Array.from([0, 0.25, 13.1, Number.NaN, Number.POSITIVE_INFINITY, 1500]);
  writeLateness(dir, lags);
  const back = readLateness(dir)!;
  assert.equal(back.length, 6);
  assert.deepEqual([...back], [...lags]);
});

test('a file that is not a lateness file, or is cut short, is refused by name', () => {
  const file = join('run-1', LATENESS_FILE);
  assert.throws(
    () => decodeLateness(Buffer.from('plain'), file),
    /run-1\/lateness\.bin\.gz: not a gzip file/,
  );
  assert.throws(
    () => decodeLateness(gzipSync(Buffer.from('something else entirely')), file),
    /run-1\/lateness\.bin\.gz: not a lateness file/,
  );
  const whole = encodeLateness(Float32Array.from([1, 2, 3]));
  const raw = gunzipSync(whole);
  const dir = mkdtempSync(join(tmpdir(), 'metabench-lateness-'));
  writeFileSync(join(dir, LATENESS_FILE), gzipSync(raw.subarray(0, raw.length - 2)));
  assert.throws(
    () => readLateness(dir),
    /lateness\.bin\.gz: truncated: its header says 3 origins \(24 bytes\), it holds 22 bytes/,
  );
});
