import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stringify } from 'csv-stringify/sync';
import { dataFiles, rowsToCsv } from './exports.js';
import { parseTimeseries, type ResultsData, type RunData } from './load.js';

/** What rowsToCsv wrote through csv-stringify before it wrote cells itself. */
function viaLibrary(rows: readonly Record<string, unknown>[]): string {
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return stringify(
    rows.map((r) => cols.map((c) => (r[c] === null || r[c] === undefined ? '' : r[c]))),
    { header: true, columns: cols, cast: { boolean: (b) => String(b) } },
  );
}

test('rowsToCsv writes what csv-stringify writes', () => {
  const awkward = ['', 'a,b', 'say "hi"', 'two\nlines', 'cr\r', ' padded ', '-1', '=sum', 'µs', '"', ','];
  const numbers = [0, -0, 1.5, -2, 1e21, 1e-7, NaN, Infinity, -Infinity, 123456789.123];
  const rows: Record<string, unknown>[] = [];
  for (let i = 0; i < 40; i++)
    rows.push({
      t_s: i,
      text: awkward[i % awkward.length],
      n: numbers[i % numbers.length],
      flag: i % 3 === 0 ? true : i % 3 === 1 ? false : null,
      ...(i % 4 === 0 ? { 'late, key': undefined, 'quoted "key"': i } : {}),
    });
  assert.equal(rowsToCsv(rows), viaLibrary(rows));
  assert.equal(rowsToCsv([{ a: 1 }]), viaLibrary([{ a: 1 }]));
  assert.equal(rowsToCsv([{ a: { nested: 1 } }, { a: 2 }]), viaLibrary([{ a: { nested: 1 } }, { a: 2 }]));
  assert.equal(rowsToCsv([]), viaLibrary([]));
});

test("data/timeseries.csv holds every run's series, long by run, a column a run lacks empty", () => {
  const run = (index: number, csv: string): RunData =>
    ({ index, series: parseTimeseries(csv), summary: {} }) as unknown as RunData;
  const x = {
    runs: [run(1, 't_s,phase,goodput\n0,warmup,3\n1,observe,\n'), run(2, 't_s,goodput,extra\n0,4,"a,b"\n')],
    aggregate: null,
    sweep: null,
    steps: null,
  } as unknown as ResultsData;
  const ts = dataFiles(x, []).find((f) => f.path === 'data/timeseries.csv');
  assert.equal(ts?.content, 'run,t_s,phase,goodput,extra\n1,0,warmup,3,\n1,1,observe,,\n2,0,,4,"a,b"\n');
});
