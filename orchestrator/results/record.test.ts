import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { SuccessLog } from '../../bench/record/successLog.js';
import { tempDir } from '../../test/helpers/cli.js';
import type { RunRecord } from '../analysis/analyseRun.js';
import { hasRunRecord, readRunRecord, recordFile, writeRunRecord } from './record.js';

/** What JSON alone would lose, in the places a record holds it. */
function awkward(): { record: RunRecord; log: SuccessLog } {
  const log = new SuccessLog();
  log.push(1000.5, 12.25, 0);
  log.push(1001, 0.1 + 0.2, 1, 3.5);
  log.push(1002, 7, 0); // no time to first token: NaN in its column
  const record = {
    plan: { totalMs: 5000, nested: { deadline: Infinity, floor: -Infinity, none: NaN, zero: -0 } },
    runtime: 'sim',
    recorded: {
      bucketMs: 1000,
      series: {
        goodput: new Float64Array([1, NaN, Infinity, -Infinity, -0, 5e-324, 0.1 + 0.2]),
        flags: new Uint8Array([0, 1, 255]),
        lags: new Float32Array([0.5, NaN, -1.25]),
        ids: new Int32Array([-7, 2 ** 31 - 1]),
      },
      successes: log,
      // An offset view: only its own bytes are kept.
      window: new Float64Array(new Float64Array([9, 8, 7, 6]).buffer, 8, 2),
      list: [1, NaN, { x: -Infinity }],
    },
    server: null,
    triggers: [],
    interrupted: false,
  } as unknown as RunRecord;
  return { record, log };
}

test('a record holding typed arrays, non-finite numbers, -0 and a success log reads back as the same values', () => {
  const dir = tempDir('record');
  const { record, log } = awkward();
  assert.equal(hasRunRecord(dir), false);
  writeRunRecord(dir, record);
  assert.equal(hasRunRecord(dir), true);
  const back = readRunRecord(dir) as unknown as {
    plan: unknown;
    recorded: { successes: SuccessLog } & Record<string, unknown>;
  };
  const { successes, ...rest } = back.recorded;
  const { successes: _, ...restWas } = record.recorded as unknown as Record<string, unknown>;
  // deepStrictEqual tells -0 from 0, NaN from null, and a Float32Array from a Float64Array.
  assert.deepStrictEqual(rest, restWas);
  assert.deepStrictEqual(back.plan, record.plan);
  assert.ok(successes instanceof SuccessLog);
  assert.deepStrictEqual(successes.columns(), log.columns());
  assert.deepStrictEqual(successes.latency(0, 2000), log.latency(0, 2000));
  assert.ok(Object.is((back.plan as unknown as { nested: { zero: number } }).nested.zero, -0));
});

test('a value the record cannot hold is refused when written, naming the field, instead of coming back as something else', () => {
  const dir = tempDir('record-refuse');
  const record = { ...awkward().record, extra: { byKey: new Map([['a', 1]]) } } as unknown as RunRecord;
  assert.throws(() => writeRunRecord(dir, record), /field "byKey" is a Map, which the record cannot hold/);
  assert.equal(existsSync(recordFile(dir)), false);
});

test('a missing, foreign or corrupt record is a usage error naming the file', () => {
  const dir = tempDir('record-bad');
  assert.throws(
    () => readRunRecord(dir),
    (e: Error & { exitCode?: number }) => {
      assert.match(
        e.message,
        /record\.json\.gz: missing: this run was recorded by a metabench that kept no record/,
      );
      assert.equal(e.exitCode, 2);
      return true;
    },
  );
  writeFileSync(recordFile(dir), 'not gzip');
  assert.throws(() => readRunRecord(dir), /record\.json\.gz: not a run record: /);
  writeFileSync(recordFile(dir), gzipSync(JSON.stringify({ format: 'other', version: 1, record: {} })));
  assert.throws(() => readRunRecord(dir), /not a run record of version 1 \(format other, version 1\)/);
});
