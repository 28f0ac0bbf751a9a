import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Float64, Table, tableToIPC, Utf8, vectorFromArray, type Vector } from 'apache-arrow';
import { Recorder, type PolicyPresence } from '../../bench/record/Recorder.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { timeseriesCsv } from './timeseries.js';
import { TIMESERIES_ARROW, writeTimeseries, type SeriesTable } from './timeseriesFiles.js';

const plan = planRun(
  parseExperiment(
    readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8'),
    'retry-storm.yaml',
  ),
  { scale: 1, run: 1 },
);

function csvOf(policies: PolicyPresence): Record<string, string>[] {
  const rec = new Recorder({ policies });
  rec.policy({ type: 'breaker', client: 0, from: 'closed', to: 'open', atMs: 250 });
  rec.policy({ type: 'breaker', client: 0, from: 'open', to: 'half-open', atMs: 1500 });
  rec.tick(2000);
  const [header, ...rows] = timeseriesCsv(plan, rec.close(), null).trim().split('\n');
  const cols = header!.split(',');
  return rows.map((r) => Object.fromEntries(r.split(',').map((v, i) => [cols[i]!, v])));
}

test('timeseries.csv: the breaker-state columns, empty when the client has no breaker', () => {
  const none = { clients: 1, budget: false, breaker: false, throttle: false, hedge: false, abandon: false };
  const withBreaker = csvOf({ ...none, breaker: true });
  assert.deepEqual(
    withBreaker.map((r) => [r['breaker_open'], r['breaker_half_open'], r['breaker_opens']]),
    [
      ['0.75', '0', '1'],
      ['0.5', '0.5', '0'],
    ],
  );
  assert.equal(withBreaker[0]!['hedges'], ''); // no hedging: not measured, not zero
  assert.equal(withBreaker[0]!['cancelled_attempts'], '0');
  const without = csvOf(none);
  assert.equal(without[0]!['breaker_open'], '');
  assert.equal(without[0]!['retries_denied_budget'], '');
});

test('a first attempt the breaker refuses still counts as offered on schedule (firstSends); a refused retry does not', () => {
  const rec = new Recorder({
    policies: { clients: 1, budget: false, breaker: true, throttle: false, hedge: false, abandon: false },
  });
  rec.policy({ type: 'breaker', client: 0, from: 'closed', to: 'open', atMs: 100 });
  rec.policy({ type: 'rejected', client: 0, origin: 1, number: 1, by: 'breaker', atMs: 200 });
  rec.policy({ type: 'rejected', client: 0, origin: 2, number: 2, by: 'breaker', atMs: 300 });
  rec.policy({ type: 'rejected', client: 0, origin: 3, number: 1, by: 'throttle', atMs: 1200 });
  rec.tick(2000);
  assert.deepEqual(rec.close().series.firstSends, [1, 1]);
});

/** Writes `t` as timeseries.arrow and checks its bytes are those of apache-arrow's own builders. */
function assertBuilderBytes(t: SeriesTable): void {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-ts-arrow-'));
  writeTimeseries(dir, t);
  const columns: Record<string, Vector> = {};
  t.columns.forEach((name, k) => {
    const cells = t.rows.map((row) => row[k] ?? null);
    columns[name] =
      name === 'phase'
        ? vectorFromArray(cells as (string | null)[], new Utf8())
        : vectorFromArray(cells as (number | null)[], new Float64());
  });
  const expected = Buffer.from(tableToIPC(new Table(columns), 'file'));
  assert.ok(readFileSync(join(dir, TIMESERIES_ARROW)).equals(expected));
}

test("timeseries.arrow's bytes from the single-file apache-arrow build are the package module build's", () => {
  const t: SeriesTable = {
    columns: ['t', 'phase', 'goodput', 'p99_ms'],
    rows: [
      [0, 'warmup', 950, 21.5],
      [1, 'baseline', null, 0.1 + 0.2],
      [2, null, -0, Number.MAX_VALUE],
      [3, 'observe — é', 1e-300, null],
    ],
  };
  assertBuilderBytes(t);
});

test('timeseries.arrow: float64 columns filled in place are the builder’s bytes (no null, all null, mixed, many rows)', () => {
  const n = 700;
  const t: SeriesTable = {
    columns: ['t', 'phase', 'none_null', 'all_null', 'mixed'],
    rows: Array.from({ length: n }, (_, i) => [
      i,
      i % 3 ? 'observe' : null,
      i * 0.1,
      null,
      i % 7 === 0 ? null : i % 5 === 0 ? -0 : 1 / (i + 1),
    ]),
  };
  assertBuilderBytes(t);
});
