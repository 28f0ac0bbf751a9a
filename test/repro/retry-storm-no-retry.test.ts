import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assertClaimed } from '../helpers/catalogue.js';
import { runScaled } from '../helpers/experiment.js';

// The spine's control (retry-storm.test.ts has the storm): the same lab and pause without
// retries recovers. A file of its own so that CI's share keeps the storm alone (test/run.js);
// `npm test` checks this claim in simulation (sim/acceptance.test.ts).

test('retry-storm-no-retry recovers and reports a recovery time', async () => {
  // runScaled: exit 0, usable, offered = recorded, and the simulated twin agrees.
  const { out, s } = await runScaled('experiments/retry-storm-no-retry.yaml');
  assertClaimed('retry-storm-no-retry', s);
  assert.equal(s.metastable, false);
  assert.ok(
    s.recoveryTimeS !== null && s.recoveryTimeS > 0 && s.recoveryTimeS <= s.recoveryDeadlineS,
    `recovery ${s.recoveryTimeS} s`,
  );
  assert.ok(
    s.afterTrigger.amplification! <= 1.01,
    `no retries: amplification ${s.afterTrigger.amplification}`,
  );
  assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /recovered after/);
});
