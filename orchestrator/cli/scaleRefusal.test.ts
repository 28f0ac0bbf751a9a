import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, runCli } from '../../test/helpers/cli.js';
import { loadExperimentFile } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { smallestAcceptedScale } from '../spec/scaleLimits.js';

// Issue 32, points 3 and 5: where --scale meets the plan, a scale below the experiment's
// limits is refused with exit 3, naming the file, the field's line, the constant and the
// smallest scale accepted; --any-scale runs anyway and says so.

const file = join(REPO, 'experiments/retry-storm.yaml');
const smallest = smallestAcceptedScale(
  planRun(loadExperimentFile(file), { scale: 1, run: 1, sourceFile: file }),
);
const recoveryLine =
  readFileSync(file, 'utf8')
    .split('\n')
    .findIndex((l) => l.startsWith('recovery:')) + 1;

test('run --dry-run below the smallest accepted scale: exit 3, the field and its line, the constant, the smallest scale', async () => {
  const r = await runCli(['run', file, '--runtime', 'sim', '--scale', '0.2', '--dry-run']);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    new RegExp(
      `retry-storm\\.yaml:${recoveryLine}:\\d+: recovery\\.tolerance: --scale 0\\.2 is below the smallest scale this experiment accepts, ${smallest}: .*noise floor`,
    ),
  );
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

test('run --dry-run at the smallest accepted scale prints the constants beside the scaled durations', async () => {
  const r = await runCli(['run', file, '--runtime', 'sim', '--scale', String(smallest), '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /time constants \(not scaled\):\n {4}client timeout +500ms +client\.timeout/);
  assert.match(r.stdout, new RegExp(`smallest accepted scale: ${smallest}\\n`));
  assert.doesNotMatch(r.stdout, /REFUSED/);
});

test('--any-scale runs below the limits, warning, and the dry run marks each limit broken', async () => {
  const r = await runCli(['run', file, '--runtime', 'sim', '--scale', '0.2', '--any-scale', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /warning: --any-scale: this run is not the experiment the file describes/);
  assert.match(r.stdout, /recovery window \(recovery\.tolerance\) +1s < REFUSED/);
});

test('validate --scale checks the limits of that scale; without it, scale 1, and an accepted file says its smallest scale', async () => {
  const ok = await runCli(['validate', file]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /retry-storm\.yaml: ok\n/);
  const low = await runCli(['validate', file, '--scale', '0.1']);
  assert.equal(low.code, 3);
  assert.match(low.stderr, new RegExp(`below the smallest scale this experiment accepts, ${smallest}`));
  // A criterion no scale can meet is refused at scale 1 too, with the tolerance that would do.
  const noisy = await runCli(['validate', file, '--set', 'load.rate=20/s']);
  assert.equal(noisy.code, 3);
  assert.match(noisy.stderr, /no scale is accepted, not even 1: .*raise recovery\.tolerance to \d+%/);
});
