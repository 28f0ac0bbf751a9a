import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { runCli, tempDir } from '../helpers/cli.js';
import { isSweepTable, type SweepTable } from '../../orchestrator/report/tables.js';

// Issue 7's acceptance: a sweep of retry-storm's load rate at --scale 0.2 on the local
// runtime (two of the catalogue sweep's points, about 2 minutes), then the same command
// again resumes: nothing reruns.

test('a scaled sweep of retry-storm over two load rates writes the sweep table with a verdict per point, and resumes', async () => {
  const out = join(tempDir('sweep'), 'out');
  const args = [
    'sweep',
    '--any-scale',
    'test/fixtures/sweeps/retry-storm-two-rates.sweep.yaml',
    '--scale',
    '0.2',
    '--out',
    out,
    '--quiet',
  ];
  const r = await runCli(args);
  assert.equal(r.code, 0, r.stderr);

  const table = JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8')) as SweepTable;
  assert.ok(isSweepTable(table), 'sweep.json has the shape the report draws');
  assert.equal(table.design, 'one-at-a-time');
  assert.deepEqual(
    table.rows.map((row) => row.factors['load.rate']),
    ['70% capacity', '20% capacity'],
  );
  for (const row of table.rows) {
    assert.ok(['metastable', 'recovered'].includes(row.verdict), `a measured verdict: ${row.verdict}`);
    assert.equal(row.runs, 1);
    assert.ok((row.figures['goodput baseline'] ?? 0) > 0);
  }
  // The reference point is retry-storm as written: metastable (as in retry-storm.test.ts).
  assert.equal(table.rows[0]!.verdict, 'metastable');

  const csv = parse(readFileSync(join(out, 'sweep.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(csv.length, 2);
  assert.deepEqual(
    csv.map((row) => row['verdict']),
    table.rows.map((row) => row.verdict),
  );
  assert.ok(csv.every((row) => /^(pass|fail|unmeasured)/.test(row['hypothesis goodput baseline'] ?? '')));
  const md = readFileSync(join(out, 'sweep.md'), 'utf8');
  assert.match(md, /\| point \| varied \| load.rate \|/);
  assert.equal(md.split('\n').filter((l) => /^\| \d+ \|/.test(l)).length, 2);

  // Each point is an experiment results folder; its manifest records the factor as an override.
  const m = JSON.parse(readFileSync(join(out, 'point-2', 'run-1', 'manifest.json'), 'utf8')) as {
    overrides: string[];
    experiment: { load: { rate: unknown } };
  };
  assert.deepEqual(m.overrides, ['load.rate="20% capacity"']);
  assert.deepEqual(m.experiment.load.rate, { capacityFraction: 0.2 });
  assert.ok(existsSync(join(out, 'point-1', 'report.md')));

  // The sweep folder has its own report: the sweep table and a figure per figure of merit.
  const report = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(report, /## Sweep/);
  const svgs = readdirSync(join(out, 'figures')).filter((f) => f.startsWith('sweep-') && f.endsWith('.svg'));
  assert.ok(svgs.length >= 1, `sweep figures: ${svgs.join(', ')}`);
  assert.ok(existsSync(join(out, 'report.html')));

  // Resume: every point is complete, so none runs again.
  const again = await runCli(args.filter((a) => a !== '--quiet'));
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stderr, /2 already complete, skipped/);
  assert.doesNotMatch(again.stderr, /point \d\/2:/);
  assert.deepEqual(
    readdirSync(out)
      .filter((f) => f.startsWith('point-'))
      .sort(),
    ['point-1', 'point-2'],
  );
});
