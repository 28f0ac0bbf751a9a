import { readEvents } from '../helpers/experiment.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from '../helpers/cli.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

function experiment(
  dir: string,
  name: string,
  load: string[],
  client = 'client: { timeout: 2s }',
  work = '{ dist: constant, mean: 5ms }',
): string {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(
    file,
    [
      `name: ${name}`,
      'lab:',
      `  api: { workers: 8, work: ${work}, costs: { heavy: { dist: constant, mean: 40ms } } }`,
      'load:',
      ...load.map((l) => `  ${l}`),
      client,
      'schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 2s }',
      'recovery: { within: 2x, tolerance: 10%, window: 1s, hold: 0s }',
      '',
    ].join('\n'),
  );
  return file;
}

async function run(
  file: string,
  out: string,
  code = 0,
): Promise<{ summary: RunSummary; events: { e: string; cls?: number; kind?: string }[]; csv: string[] }> {
  const r = await runCli(['run', '--any-scale', file, '--out', out, '--quiet']);
  assert.equal(r.code, code, r.stderr);
  const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  const events = readEvents(out) as { e: string; cls?: number }[];
  const csv = readFileSync(join(out, 'run-1', 'timeseries.csv'), 'utf8')
    .trim()
    .split('\n');
  return { summary, events, csv };
}

test('phases with constant arrivals offer exactly their declared counts, and the mix its exact shares', async () => {
  const dir = tempDir('phases');
  const file = experiment(dir, 'phases-mix', [
    'arrival: constant',
    'phases:',
    '  - { name: sustain, duration: 3s, rate: 40/s }',
    '  - { name: ramp, duration: 2s, from: 40/s, to: 120/s }',
    '  - { name: burst, duration: 1s, rate: 200/s }',
    'mix:',
    '  - { name: light, share: 75%, key: { dist: zipf, keys: 100, exponent: 1 } }',
    '  - { name: heavy, share: 25%, cost: heavy }',
  ]);
  const { summary, events, csv } = await run(file, join(dir, 'out'));
  // 3 s × 40 + 2 s × 80 (mean of the ramp) + 1 s × 200 = 480 origins.
  assert.equal(summary.offered, 480);
  assert.equal(summary.recorded, 480);
  const offered = csv.slice(1).map((row) => Number(row.split(',')[2]));
  assert.deepEqual(offered.slice(0, 6), [40, 40, 40, 60, 100, 200]);
  const outcomes = events.filter((e) => e.e === 'outcome');
  const firsts = events.filter((e) => e.e === 'attempt' && (e as { n?: number }).n === 1);
  assert.equal(outcomes.length, 480);
  assert.equal(firsts.filter((e) => e.cls === 0).length, 360);
  assert.equal(firsts.filter((e) => e.cls === 1).length, 120);
  assert.equal(summary.load!.model, 'open');
  assert.match(summary.load!.description, /3 phases/);
});

test('a closed loop is labelled closed, with a warning that it is for comparison only', async () => {
  const dir = tempDir('closed');
  const file = experiment(dir, 'closed-loop', [
    'closedLoop: { users: 4, think: { dist: exponential, mean: 50ms } }',
  ]);
  const { summary } = await run(file, join(dir, 'out'));
  assert.equal(summary.load!.model, 'closed');
  assert.ok(summary.warnings.some((w) => /CLOSED loop/.test(w)));
  assert.equal(summary.offered, summary.recorded);
  assert.ok(summary.offered > 50, `offered ${summary.offered}`);
});

test('a connection cap below what the load needs makes attempts wait in the client, and the run says so', async () => {
  const dir = tempDir('cap');
  const file = experiment(
    dir,
    'capped',
    ['arrival: constant', 'rate: 100/s'],
    'client: { timeout: 2s, connections: 2 }',
    '{ dist: constant, mean: 30ms }',
  );
  // Two connections of 30 ms carry at most 66.7/s of the 100/s offered: the baseline cannot
  // hold the default steady state (goodput >= 95% of offered), so the run is invalid (exit 11).
  const { summary, csv } = await run(file, join(dir, 'out'), 11);
  assert.ok(
    summary.validity.failed.some((f) => f.check === 'baseline'),
    summary.validity.failed.map((f) => f.check).join(', '),
  );
  assert.ok(summary.clientWait!.samples > 0, 'some attempts waited for a connection');
  assert.ok(
    summary.warnings.some((w) => /connection cap \(2\).*turned partly closed/.test(w)),
    summary.warnings.join('\n'),
  );
  assert.equal(summary.load!.connections, 2);
  const header = csv[0]!.split(',');
  const col = header.indexOf('client_waits');
  assert.ok(col > 0);
  assert.ok(csv.slice(1).some((row) => Number(row.split(',')[col]) > 0));
});
