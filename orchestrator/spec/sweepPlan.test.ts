import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '../../test/helpers/cli.js';
import { incompletePointDirs, pendingPoints, planPoints, type Factor } from './sweepPlan.js';

const rate: Factor = {
  path: 'load.rate',
  values: ['50% capacity', '70% capacity', '90% capacity'],
  reference: '70% capacity',
};
const attempts: Factor = { path: 'client.retry.maxAttempts', values: [1, 4], reference: 4 };

test('one-at-a-time: the reference point, then each factor moved alone', () => {
  const points = planPoints('one-at-a-time', [rate, attempts]);
  assert.deepEqual(points, [
    { index: 1, values: { 'load.rate': '70% capacity', 'client.retry.maxAttempts': 4 } },
    { index: 2, varied: 'load.rate', values: { 'load.rate': '50% capacity', 'client.retry.maxAttempts': 4 } },
    { index: 3, varied: 'load.rate', values: { 'load.rate': '90% capacity', 'client.retry.maxAttempts': 4 } },
    {
      index: 4,
      varied: 'client.retry.maxAttempts',
      values: { 'load.rate': '70% capacity', 'client.retry.maxAttempts': 1 },
    },
  ]);
  // A reference outside the values still comes first; values equal to it (deeply) are not repeated.
  const retry: Factor = {
    path: 'client.retry',
    values: [{ policy: 'none' }, { policy: 'immediate', maxAttempts: 4 }],
    reference: { policy: 'immediate', maxAttempts: 4 },
  };
  assert.equal(planPoints('one-at-a-time', [retry]).length, 2);
});

test('factorial: every combination, the last factor fastest', () => {
  const points = planPoints('factorial', [rate, attempts]);
  assert.equal(points.length, 6);
  assert.deepEqual(
    points.map((p) => [p.index, p.values['load.rate'], p.values['client.retry.maxAttempts'], p.varied]),
    [
      [1, '50% capacity', 1, undefined],
      [2, '50% capacity', 4, undefined],
      [3, '70% capacity', 1, undefined],
      [4, '70% capacity', 4, undefined],
      [5, '90% capacity', 1, undefined],
      [6, '90% capacity', 4, undefined],
    ],
  );
});

test('resume skips points whose results are complete, and finds half-run ones', () => {
  const dir = tempDir('planner');
  const points = planPoints('one-at-a-time', [rate]);
  const done = (k: number, runs: number, top: boolean): void => {
    for (let i = 1; i <= runs; i++) {
      mkdirSync(join(dir, `point-${k}`, `run-${i}`), { recursive: true });
      writeFileSync(join(dir, `point-${k}`, `run-${i}`, 'summary.json'), '{}');
    }
    if (top) writeFileSync(join(dir, `point-${k}`, 'summary.json'), '{}');
  };
  done(1, 2, true); // complete with 2 runs
  done(2, 1, false); // interrupted after its first run
  assert.deepEqual(
    pendingPoints(dir, points, 2).map((p) => p.index),
    [2, 3],
  );
  assert.deepEqual(incompletePointDirs(dir, points, 2), [join(dir, 'point-2')]);
  // Asked for 3 runs per point, point 1 is not complete any more.
  assert.deepEqual(
    pendingPoints(dir, points, 3).map((p) => p.index),
    [1, 2, 3],
  );
});
