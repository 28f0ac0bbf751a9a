import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';

// error-path's mitigated twin (issue 19) at the suite's scale, with its simulated twin: in
// the whole suite, not CI's share (test/run.js), which keeps the metastable row.

test('error-path-mitigated recovers: the bounded queue refuses on arrival at no cost, and nothing times out', async () => {
  const { s, rows } = await runScaled('experiments/error-path-mitigated.yaml');
  assertClaimed('error-path-mitigated', s);
  const end = rows.length;
  assert.ok(sum(rows, 'rejected_queue_full', 0, end) > 0, 'the bounded queue refused requests');
  assert.equal(sum(rows, 'timed_out', 0, end), 0, 'no request reached its timeout');
});
