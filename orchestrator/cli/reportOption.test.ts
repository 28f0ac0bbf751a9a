import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode } from '../../foundation/exitCodes.js';
import { runCli, tempDir } from '../../test/helpers/cli.js';

// What --report leaves out: the report and what it is drawn from the folder into.
const REPORT = ['report.md', 'report.html', 'figures', 'data'];
// A simulated retry-storm at a tenth of its schedule (a test of the machinery, not a result).
const SMALL = ['--runtime', 'sim', '--scale', '0.1', '--any-scale', '--events', 'none', '--quiet'];

test('run --report none writes the summaries and records, not the report; metabench report writes it later', async () => {
  const out = join(tempDir('report-none'), 'run');
  const r = await runCli(['run', 'experiments/retry-storm.yaml', ...SMALL, '--report', 'none', '--out', out]);
  // At a tenth of its schedule a run may come out invalid (exit 11): its files are written all the same.
  assert.ok(r.code === 0 || r.code === ExitCode.unusable, r.stderr);
  if (r.code !== 0)
    assert.match(r.stderr, /see .*summary\.json/, 'an invalid run without a report points at its summary');
  for (const f of ['summary.json', 'run-1/summary.json', 'run-1/record.json.gz', 'run-1/manifest.json'])
    assert.ok(existsSync(join(out, f)), `${f} is written`);
  for (const f of REPORT) assert.ok(!existsSync(join(out, f)), `${f} is not written`);

  const later = await runCli(['report', out, '--pdf', 'none']);
  assert.equal(later.code, 0, later.stderr);
  for (const f of REPORT) assert.ok(existsSync(join(out, f)), `metabench report wrote ${f}`);
});

test('--report takes all or none on run, and all, sweep or none on sweep', async () => {
  const bad = await runCli(['run', 'experiments/retry-storm.yaml', '--report', 'sweep', '--dry-run']);
  assert.equal(bad.code, ExitCode.usage, bad.stderr);
  assert.match(bad.stderr, /--report takes one of all, none \(got "sweep"\)/);
  const sweep = await runCli([
    'sweep',
    'test/fixtures/sweeps/retry-storm-two-rates.sweep.yaml',
    '--report',
    'points',
    '--dry-run',
  ]);
  assert.equal(sweep.code, ExitCode.usage, sweep.stderr);
  assert.match(sweep.stderr, /--report takes one of all, sweep, none \(got "points"\)/);
});

test("sweep --report sweep writes the sweep's report and table, and no point's report", async () => {
  const out = join(tempDir('report-sweep'), 'sweep');
  const r = await runCli([
    'sweep',
    'test/fixtures/sweeps/retry-storm-two-rates.sweep.yaml',
    ...SMALL,
    '--jobs',
    '1',
    '--report',
    'sweep',
    '--out',
    out,
  ]);
  assert.ok(r.code === 0 || r.code === ExitCode.unusable, r.stderr);
  for (const f of ['sweep.json', 'sweep.csv', 'report.md', 'figures'])
    assert.ok(existsSync(join(out, f)), `${f} is written`);
  for (const p of ['point-1', 'point-2']) {
    assert.ok(existsSync(join(out, p, 'run-1', 'summary.json')), `${p}'s run summary is written`);
    for (const f of REPORT) assert.ok(!existsSync(join(out, p, f)), `${p}/${f} is not written`);
  }
});
