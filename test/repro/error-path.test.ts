import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';

// The reproduction suite, the expensive error path (issue 19): error-path.yaml at the
// suite's scale (its mitigated twin is error-path-mitigated.test.ts), asserting what its catalogue row claims
// (experiments/README.md). runScaled also runs its simulated twin, which must
// reach the same outcome class.

describe('reproduction suite: the expensive error path', () => {
  test('error-path is metastable with no retries: every origin fails after the trigger, and the workers spend their time on error paths', async () => {
    const { s, rows } = await runScaled('experiments/error-path.yaml');
    assertClaimed('error-path', s);
    // No client retries: the loop is inside the service, not in the client.
    assert.equal(s.afterTrigger.amplification, 1, `amplification ${s.afterTrigger.amplification}`);
    const base = s.baseline.goodputPerS!;
    const after = s.afterTrigger.goodputPerS!;
    assert.ok(after < 0.1 * base, `goodput ${after}/s after the trigger, ${base}/s in the baseline`);
    // The service times requests out and pays the error path for each.
    const end = rows.length;
    assert.ok(sum(rows, 'timed_out', 0, end) > 0, 'the api timed requests out');
    assert.ok(sum(rows, 'error_path_seconds_timeout', 0, end) > 0, 'the timeouts cost error-path time');
    assert.match(
      s.sustainingEffect ?? '',
      /^the workers spend (9\d|100)(\.\d)?% of their time on error paths/,
    );
  });
});
