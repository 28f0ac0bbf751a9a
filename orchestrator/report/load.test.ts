import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'csv-parse/sync';
import { parseTimeseries } from './load.js';

/** parseTimeseries as it read every file through csv-parse. */
function viaLibrary(text: string) {
  const records = parse(text, { skip_empty_lines: true, relax_column_count: false }) as string[][];
  return parseTimeseries(
    records.map((r) => r.map((c) => `"${c.replaceAll('"', '""')}"`).join(',')).join('\r\n'),
  );
}

test('parseTimeseries reads a plain file as csv-parse does', () => {
  for (const text of [
    't_s,phase,goodput,p50\n0,warmup,3,\n1,observe,,1.5\n\n2,observe,4,NaN\n',
    't_s,x\n0,1',
    '',
    '\n\n',
    '\ufefft_s, spaced \n0, 1 \n',
    'only\n',
  ])
    assert.deepEqual(parseTimeseries(text), viaLibrary(text), JSON.stringify(text));
});

test('parseTimeseries: a record of another length is an error, as csv-parse says', () => {
  assert.throws(() => parseTimeseries('a,b\n1,2\n3\n'), /Invalid Record Length/);
});
