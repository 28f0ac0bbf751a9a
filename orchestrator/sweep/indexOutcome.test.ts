import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../analysis/summary.js';
import { sweepIndexOutcome } from './indexOutcome.js';
import { indexOutcome } from '../run/indexOutcome.js';

const run = (outcome: 'metastable' | 'recovered' | 'invalid'): RunSummary =>
  ({
    outcome,
    metastable: outcome === 'invalid' ? null : outcome === 'metastable',
    validity: { valid: outcome !== 'invalid', checks: [], failed: [] },
  }) as unknown as RunSummary;

test("a sweep's index line counts its points' verdicts and its runs' validity; not run and interrupted are said", () => {
  assert.deepEqual(
    sweepIndexOutcome(
      [
        [run('metastable'), run('metastable')],
        [run('recovered'), run('invalid')],
        [run('invalid'), run('invalid')],
      ],
      {
        interrupted: false,
        failed: false,
      },
    ),
    { outcome: 'metastable 1, recovered 1, invalid 1 of 3 points', validity: '3/6 valid' },
  );
  assert.deepEqual(sweepIndexOutcome([[run('metastable')], []], { interrupted: true, failed: false }), {
    outcome: 'interrupted: metastable 1, not run 1 of 2 points',
    validity: '1/1 valid',
  });
});

test("a run's index line: one run's outcome, several runs' tally, interrupted or failed first", () => {
  assert.deepEqual(indexOutcome([run('metastable')], { interrupted: false, failed: false }), {
    outcome: 'metastable',
    validity: 'valid',
  });
  assert.deepEqual(indexOutcome([run('invalid')], { interrupted: false, failed: false }), {
    outcome: 'invalid',
    validity: 'invalid',
  });
  assert.deepEqual(
    indexOutcome([run('metastable'), run('invalid')], { interrupted: true, failed: false }).validity,
    '1/2 valid',
  );
  assert.match(
    indexOutcome([run('metastable'), run('invalid')], { interrupted: true, failed: false }).outcome,
    /^interrupted: metastable 1\/1; invalid 1/,
  );
  assert.deepEqual(indexOutcome([], { interrupted: false, failed: true }), {
    outcome: 'failed',
    validity: 'none',
  });
});
