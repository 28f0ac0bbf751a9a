import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { REPO, runCli, tempDir } from '../helpers/cli.js';

// sweep --jobs: simulated points on worker threads write the folder a serial sweep writes.
// Everything is compared byte for byte, but what records when and how it was run: the
// manifests' start time and command line, and the reports' date line that shows it.

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => statSync(join(dir, f)).isFile())
    .sort();
}

/** A file's content, with the start time and the command line (which names --out and --jobs) left out. */
function comparable(dir: string, file: string): string {
  const text = readFileSync(join(dir, file), 'utf8');
  if (file.endsWith('manifest.json')) {
    const m = JSON.parse(text) as Record<string, unknown>;
    delete m.startedAt;
    delete m.command;
    return JSON.stringify(m, null, 2);
  }
  return text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'DATE');
}

test('sweep --jobs 2 writes the same sweep.csv, summaries, figures and reports as --jobs 1', async () => {
  const dir = tempDir('sweep-jobs');
  const file = join(dir, 'rates.sweep.yaml');
  // Three points (the reference point, 70%, and two rates), two runs each: both lanes busy.
  writeFileSync(
    file,
    [
      'name: jobs-check',
      `experiment: ${JSON.stringify(join(REPO, 'experiments', 'retry-storm.yaml'))}`,
      'design: one-at-a-time',
      'factors:',
      '  - { path: load.rate, values: [20% capacity, 90% capacity] }',
      'repeat: 2',
      'runtime: sim',
      '',
    ].join('\n'),
  );
  const out = (jobs: number) => join(dir, `jobs-${jobs}`);
  for (const jobs of [1, 2]) {
    const r = await runCli([
      'sweep',
      file,
      '--scale',
      '0.1',
      '--any-scale',
      '--out',
      out(jobs),
      '--jobs',
      String(jobs),
    ]);
    assert.equal(r.code, 0, r.stderr);
    if (jobs === 2) assert.match(r.stderr, /^3 points, 2 at a time$/m);
  }
  const serial = files(out(1));
  assert.deepEqual(files(out(2)), serial, 'the same files');
  for (const f of ['sweep.csv', 'sweep.json', 'point-1/summary.json', 'point-3/run-2/summary.json'])
    assert.ok(serial.includes(f), `${f} is written`);
  const differing = serial.filter((f) => comparable(out(1), f) !== comparable(out(2), f));
  assert.deepEqual(
    differing,
    [],
    `files that differ: ${differing.map((f) => relative(dir, join(out(2), f))).join(', ')}`,
  );
  // A verdict per point, in the table both wrote.
  const csv = readFileSync(join(out(2), 'sweep.csv'), 'utf8')
    .trim()
    .split('\n');
  assert.equal(csv.length, 1 + 3);
});

test('model --jobs 2 simulates the same map as --jobs 1', async () => {
  const dir = tempDir('model-jobs');
  const out = (jobs: number) => join(dir, `jobs-${jobs}`);
  for (const jobs of [1, 2]) {
    const r = await runCli([
      'model',
      join(REPO, 'experiments', 'retry-storm.yaml'),
      '--rates',
      '20%,50%,70%',
      '--durations',
      '1s,3s',
      '--scale',
      '0.3',
      '--jobs',
      String(jobs),
      '--out',
      out(jobs),
    ]);
    assert.equal(r.code, 0, r.stderr);
  }
  for (const f of ['map.csv', 'model.json'])
    assert.equal(readFileSync(join(out(2), f), 'utf8'), readFileSync(join(out(1), f), 'utf8'), f);
  // The map's six cells, in the grid's order whichever thread finished first.
  assert.equal(
    readFileSync(join(out(2), 'map.csv'), 'utf8')
      .trim()
      .split('\n').length,
    1 + 6,
  );
  // model.md differs only in the wall time it took.
  const md = (jobs: number) =>
    readFileSync(join(out(jobs), 'model.md'), 'utf8').replace(/simulated in [\d.]+ s/, 'simulated in T s');
  assert.equal(md(2), md(1));
});
