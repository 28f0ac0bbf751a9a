import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO } from '../../test/helpers/cli.js';
import { loadExperimentFile } from './load.js';
import { planRun } from './plan.js';
import { dryRun, formatDryRun } from './dryRun.js';
import { formatRange, simulatedRunS } from './simTime.js';

// Issue 33: a simulated run's --dry-run estimated the lab's time (≈ 282.5 s for a run of
// about 5 s). A simulated run is estimated from the simulator's measured speed, as a range.

const storm = loadExperimentFile(join(REPO, 'experiments/retry-storm.yaml'));

test("retry-storm's simulated estimate brackets its measured 3.1 s through the CLI (2026-12-07, idle)", () => {
  const t = simulatedRunS(planRun(storm, { scale: 1, run: 1 }))!;
  assert.ok(t.lowS < 3.1 && 3.1 < t.highS, `${t.lowS} to ${t.highS} s`);
  assert.ok(t.highS < 30, 'nowhere near the schedule’s 282.5 s');
  const noRetry = loadExperimentFile(join(REPO, 'experiments/retry-storm-no-retry.yaml'));
  assert.ok(
    simulatedRunS(planRun(noRetry, { scale: 1, run: 1 }))!.highS < t.highS,
    'fewer attempts, less time',
  );
});

test('--dry-run --runtime sim prints the simulated range, the lab runtime the schedule’s length', () => {
  const plan = planRun(storm, { scale: 1, run: 1 });
  const sim = formatDryRun(plan, dryRun(plan, 2), { name: 'sim', virtualTime: true });
  assert.match(sim, /wall time: simulated, ≈ \d+ to \d+ s per run × 2 = ≈ \d+ to \d+ s on an idle core/);
  assert.doesNotMatch(sim, /282\.5/);
  assert.match(
    formatDryRun(plan, dryRun(plan, 1), { name: 'local', virtualTime: false }),
    /wall time: ≈ 282\.5s per run/,
  );
});

test('formatRange: whole seconds, low rounded down, high up, never an empty range', () => {
  assert.equal(formatRange(1.84, 6.8), '1 to 7 s');
  assert.equal(formatRange(2.2, 2.3), '2 to 3 s');
});
