import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { REPO, runCli, tempDir } from '../helpers/cli.js';

// sweep --rerun-invalid (issue 31 point 4), on the simulation, where a point can be made
// invalid deterministically: a baseline p99 threshold no run can meet (point 2), or a
// valid run's summary marked invalid after the fact (the lab's case: a busy machine).

/** A two-point sweep of retry-storm on the simulation: the reference point, and a baseline p99 of at most 1 ms. */
function sweepFile(dir: string): string {
  const file = join(dir, 'p99.sweep.yaml');
  writeFileSync(
    file,
    [
      'name: rerun-check',
      `experiment: ${JSON.stringify(join(REPO, 'experiments', 'retry-storm.yaml'))}`,
      'design: one-at-a-time',
      'factors:',
      "  - { path: hypothesis.p99, values: ['<= 400ms', '<= 1ms'], reference: '<= 400ms' }",
      'repeat: 1',
      'runtime: sim',
      '',
    ].join('\n'),
  );
  return file;
}

function json<T>(file: string): T {
  return JSON.parse(readFileSync(file, 'utf8')) as T;
}

/** Every file under a point's folder with its modification time: untouched means the same map. */
function stamps(dir: string): Record<string, number> {
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => statSync(join(dir, f)).isFile())
      .sort()
      .map((f) => [f, statSync(join(dir, f)).mtimeMs]),
  );
}

test('a sweep with an invalid point exits 11 (as run does); --rerun-invalid re-runs that point alone, up to --max-reruns, and keeps every attempt', async () => {
  const dir = tempDir('sweep-rerun');
  const file = sweepFile(dir);
  const out = join(dir, 'out');
  const first = await runCli(['sweep', file, '--scale', '0.1', '--any-scale', '--out', out, '--quiet']);
  assert.equal(first.code, 11, first.stderr);
  assert.match(
    first.stderr,
    /invalid runs, so no verdict from them, in point 2 \(no valid run; invalid 1 \(baseline hypothesis\)\)/,
  );
  assert.match(first.stderr, /--resume .* --rerun-invalid/);
  // The sweep's report opens with the sweep's result: its verdicts per point, the invalid one counted.
  const report = readFileSync(join(out, 'report.md'), 'utf8');
  const top = report.slice(0, report.indexOf('| | |'));
  assert.match(top, /\*\*Sweep of 2 points: metastable 1, invalid 1\.\*\*/);
  assert.match(top, /- hypothesis\.p99 = <= 1ms: \*\*invalid\*\*/);
  assert.match(top, /1 point is invalid/);

  const before = stamps(join(out, 'point-1'));
  const again = await runCli(['sweep', '--resume', out, '--rerun-invalid', '--max-reruns', '2']);
  // The simulation is deterministic: run 1 of point 2 fails the same way each time.
  assert.equal(again.code, 11, again.stderr);
  assert.match(again.stderr, /point 2: re-running its invalid runs/);
  assert.doesNotMatch(again.stderr, /point 1: re-running/);
  const p2 = readdirSync(join(out, 'point-2')).sort();
  assert.ok(p2.includes('run-1.invalid-1') && p2.includes('run-1.invalid-2'), p2.join(', '));
  assert.ok(!p2.includes('run-1.invalid-3'), 'at most --max-reruns re-runs');
  assert.ok(existsSync(join(out, 'point-2', 'run-1.invalid-1', 'summary.json')), 'nothing measured is lost');
  const m = json<{ rerun?: { of: string; reruns: number } }>(join(out, 'point-2', 'run-1', 'manifest.json'));
  assert.deepEqual({ of: m.rerun?.of, reruns: m.rerun?.reruns }, { of: 'run-1', reruns: 2 });
  // Point 1 (valid) was not touched.
  assert.deepEqual(stamps(join(out, 'point-1')), before);
});

test('--rerun-invalid: an invalid run that comes out valid again replaces it; the point and the sweep table are made again from it', async () => {
  const dir = tempDir('sweep-rerun-valid');
  const file = join(dir, 'rates.sweep.yaml');
  writeFileSync(
    file,
    [
      'name: rerun-valid',
      `experiment: ${JSON.stringify(join(REPO, 'experiments', 'retry-storm.yaml'))}`,
      'design: one-at-a-time',
      'factors:',
      '  - { path: load.rate, values: [20% capacity, 70% capacity], reference: 70% capacity }',
      'repeat: 1',
      'runtime: sim',
      '',
    ].join('\n'),
  );
  const out = join(dir, 'out');
  const first = await runCli(['sweep', file, '--scale', '0.1', '--any-scale', '--out', out, '--quiet']);
  assert.equal(first.code, 0, first.stderr);
  // Point 2's run as a busy machine would leave it: invalid (schedule lag), no verdict.
  const runSummary = join(out, 'point-2', 'run-1', 'summary.json');
  const valid = json<Record<string, unknown>>(runSummary);
  const lag = { check: 'lag', what: 'schedule lag p99 of first attempts, ms', value: 37.2, limit: 10 };
  const invalid = {
    ...valid,
    outcome: 'invalid',
    validity: { ...(valid['validity'] as object), valid: false, failed: [lag] },
  };
  writeFileSync(runSummary, JSON.stringify(invalid, null, 2));
  writeFileSync(join(out, 'point-2', 'summary.json'), JSON.stringify(invalid, null, 2));
  const before = stamps(join(out, 'point-1'));

  const r = await runCli(['sweep', file, '--resume', out, '--rerun-invalid']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /point 2: re-running its invalid runs/);
  assert.deepEqual(stamps(join(out, 'point-1')), before, 'point 1 was not re-run');
  // The tampered run is kept; the new one is the simulation's, byte for byte the first one's summary.
  assert.deepEqual(json(join(out, 'point-2', 'run-1.invalid-1', 'summary.json')), invalid);
  assert.deepEqual(json(runSummary), valid);
  assert.deepEqual(json(join(out, 'point-2', 'summary.json')), valid);
  const table = json<{ rows: { factors: Record<string, string>; verdict: string }[] }>(
    join(out, 'sweep.json'),
  );
  assert.ok(table.rows.every((row) => row.verdict !== 'invalid'));
});
