import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tableFromIPC, type Table } from 'apache-arrow';
import { ipcBodies } from '../../test/helpers/arrowBodies.js';
import { registerRuntimes } from '../cli/runtimes.js';
import { runExperiment } from '../run/runExperiment.js';
import { loadExperimentFile } from '../spec/load.js';
import { readRunRecord } from './record.js';

// A short simulated run's events.arrow and timeseries.arrow, read back by Arrow's own reader
// (a fresh tableFromIPC of the files, nothing of the writer's), agree with the Recorder's
// counts in the run's record: attempts and outcomes per kind, refusals per policy, per-second
// offered, attempts and goodput; and timeseries.arrow says what timeseries.csv says.
registerRuntimes();
const FILE = fileURLToPath(new URL('../../../experiments/retry-storm-breaker.yaml', import.meta.url));

function read(path: string): Table {
  return tableFromIPC(readFileSync(path));
}

/** Counts of `key(row)` over the rows where `where(row)`. */
function countBy(
  t: Table,
  where: (i: number) => boolean,
  key: (i: number) => string | number,
): Map<string | number, number> {
  const m = new Map<string | number, number>();
  for (let i = 0; i < t.numRows; i++) if (where(i)) m.set(key(i), (m.get(key(i)) ?? 0) + 1);
  return m;
}

function nonZero(r: Record<string, number>): Map<string, number> {
  return new Map(Object.entries(r).filter(([, v]) => v > 0));
}

test('events.arrow and timeseries.arrow read back with Arrow agree with the Recorder, column by column', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'metabench-arrow-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const e = loadExperimentFile(FILE, []);
  const ran = await runExperiment(e, {
    scale: 0.2,
    out: root,
    quiet: true,
    stop: new AbortController().signal,
    runtime: 'sim',
  });
  const run = join(ran.dir, 'run-1');
  const rec = readRunRecord(run).recorded;
  const totals = rec.totals;

  const ev = read(join(run, 'events.arrow'));
  // Its record batches are LZ4-frame compressed, each buffer prefixed by its decompressed length.
  const bodies = ipcBodies(readFileSync(join(run, 'events.arrow')));
  assert.ok(bodies.batches > 0);
  assert.equal(bodies.compressed, bodies.batches);
  assert.equal(bodies.wrongPrefixes, 0);
  // Each column once, as values (null where the cell is null), by Arrow's own iterator.
  const cache = new Map<string, unknown[]>();
  const col = (name: string): { get(i: number): unknown } => {
    if (!cache.has(name)) cache.set(name, [...ev.getChild(name)!] as unknown[]);
    const values = cache.get(name)!;
    return { get: (i) => values[i] };
  };
  const type = (i: number): string => String(col('e').get(i));
  const num = (name: string, i: number): number => col(name).get(i) as number;
  assert.equal(ev.numRows, totals.attempts + totals.recorded + totals.policies.breakerRejected);
  // Attempts and outcomes per kind; refusals per policy.
  assert.deepEqual(
    countBy(
      ev,
      (i) => type(i) === 'attempt',
      (i) => String(col('kind').get(i)),
    ),
    nonZero(totals.attemptOutcomes),
  );
  assert.deepEqual(
    countBy(
      ev,
      (i) => type(i) === 'outcome',
      (i) => String(col('kind').get(i)),
    ),
    nonZero(totals.outcomes),
  );
  assert.ok(totals.policies.breakerRejected > 0, 'the breaker refused attempts');
  assert.deepEqual(
    countBy(
      ev,
      (i) => type(i) === 'rejected',
      (i) => String(col('by').get(i)),
    ),
    new Map([['breaker', totals.policies.breakerRejected]]),
  );
  // Every attempt has its number, times and status; an outcome its attempt and no send time.
  for (let i = 0; i < ev.numRows; i++) {
    if (type(i) === 'attempt') {
      assert.ok(
        num('n', i) >= 1 && num('sentMs', i) >= num('intendedMs', i) && num('endMs', i) >= num('sentMs', i),
        `row ${i}`,
      );
      assert.equal(typeof num('status', i), 'number');
    } else if (type(i) === 'outcome') assert.equal(col('sentMs').get(i), null, `row ${i}`);
  }
  // Per second: offered by intended time (every origin has its outcome), attempts by send
  // time, goodput by the successes' end.
  const bucket = (ms: number): number => Math.floor(ms / rec.bucketMs);
  const series = (m: Map<string | number, number>): number[] =>
    Array.from({ length: rec.buckets }, (_, b) => m.get(b) ?? 0);
  const offered = series(
    countBy(
      ev,
      (i) => type(i) === 'outcome',
      (i) => bucket(num('intendedMs', i)),
    ),
  );
  const attempts = series(
    countBy(
      ev,
      (i) => type(i) === 'attempt',
      (i) => bucket(num('sentMs', i)),
    ),
  );
  const goodput = series(
    countBy(
      ev,
      (i) => type(i) === 'outcome' && col('kind').get(i) === 'ok',
      (i) => bucket(num('endMs', i)),
    ),
  );
  const ts = read(join(run, 'timeseries.arrow'));
  assert.equal(ts.numRows, rec.buckets);
  const column = (name: string): unknown[] =>
    [...ts.getChild(name)!.toArray()].map((v) => (v === undefined ? null : v));
  assert.deepEqual(column('offered'), offered);
  assert.deepEqual(column('attempts'), attempts);
  assert.deepEqual(column('goodput'), goodput);
  assert.deepEqual(column('offered'), series(new Map(rec.series.offered.map((v, b) => [b, v]))));

  // timeseries.arrow holds timeseries.csv's columns, cell for cell (an empty cell is null).
  const [head, ...lines] = readFileSync(join(run, 'timeseries.csv'), 'utf8').trim().split('\n');
  const names = head!.split(',');
  assert.deepEqual(
    ts.schema.fields.map((f) => f.name),
    names,
  );
  names.forEach((name, k) => {
    const cells = lines.map((l) => l.split(',')[k]!);
    const want = cells.map((c) => (c === '' ? null : name === 'phase' ? c : Number(c)));
    const got = [...ts.getChild(name)!] as unknown[];
    assert.deepEqual(got, want, name);
  });

  // The notes table: the trigger's apply and undo, and the breaker's transitions, in time order.
  const notes = read(join(run, 'events.notes.arrow'));
  const kinds = countBy(
    notes,
    () => true,
    (i) => String(notes.getChild('e')!.get(i)),
  );
  assert.equal(kinds.get('trigger'), 2);
  assert.ok((kinds.get('breaker') ?? 0) > 0);
  const seq = [...notes.getChild('seq')!.toArray()] as number[];
  assert.deepEqual(
    seq,
    [...seq].sort((a, b) => a - b),
  );
});
