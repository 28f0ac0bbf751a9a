import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dryRun, expectedOrigins, formatDryRun } from './dryRun.js';
import { parseExperiment } from './load.js';
import { planRun } from './plan.js';

const retryStorm = readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8');

test('the dry run places every phase, counts expected origins and lays out the trigger timeline', () => {
  const e = parseExperiment(retryStorm, 'retry-storm.yaml');
  const plan = planRun(e, { scale: 0.2, run: 1 });
  const d = dryRun(plan, 3);
  assert.deepEqual(
    d.phases.map((p) => [p.name, p.startS, p.endS, p.expectedOrigins]),
    [
      ['warmup', 0, 6, 280 * 6],
      ['baseline', 6, 18, 280 * 12],
      ['trigger', 18, 20, 280 * 2],
      ['observe', 20, 56, 280 * 36],
    ],
  );
  assert.equal(d.expectedOrigins, 280 * 56);
  assert.deepEqual(
    d.trigger.map((t) => t.atS),
    [18, 20, 30, 56],
  );
  // 56 s of schedule + a drain of 4 attempts x 500 ms + 0.5 s, three times.
  assert.equal(d.runS, 58.5);
  assert.equal(d.totalS, 175.5);
  const text = formatDryRun(plan, d);
  assert.match(text, /baseline +6s → 18s +expected origin requests ≈ 3360/);
  assert.match(text, /18s +apply pause api for 2 s/);
  assert.match(text, /20s +undo pause on api/);
});

test('expected origins integrate ramps exactly, and a short observation is flagged', () => {
  const a = {
    kind: 'profile' as const,
    law: 'constant' as const,
    label: '',
    segments: [
      { durationMs: 10_000, fromPerS: 0, toPerS: 100 },
      { durationMs: 10_000, fromPerS: 100, toPerS: 100 },
    ],
  };
  assert.equal(expectedOrigins(a, { startMs: 0, endMs: 10_000 }), 500);
  assert.equal(expectedOrigins(a, { startMs: 5000, endMs: 15_000 }), 375 + 500);
  const e = parseExperiment(retryStorm.replace('observe: 180s', 'observe: 20s'), 'x.yaml');
  const d = dryRun(planRun(e, { scale: 1, run: 1 }), 1);
  assert.match(d.trigger[2]!.what, /verdict will be unmeasured/);
});
