import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../analysis/summary.js';
import { BenchError } from '../errors.js';
import { ExitCode } from '../exitCodes.js';
import { enforceGate, gateFailures } from './failOn.js';

const run = (metastable: boolean | null, verdicts: ('pass' | 'fail' | 'unmeasured')[]): RunSummary =>
  ({
    run: 1,
    metastable,
    hypothesis: verdicts.map((verdict) => ({
      metric: 'p99',
      window: 'baseline',
      threshold: '<= 1s',
      verdict,
    })),
  }) as unknown as RunSummary;

test('--fail-on gates on hypotheses and metastability; unmeasured is never a pass', () => {
  assert.deepEqual(gateFailures([run(true, ['pass'])], ['hypothesis']), []);
  assert.equal(gateFailures([run(false, ['pass', 'fail'])], ['hypothesis']).length, 1);
  assert.match(gateFailures([run(false, ['unmeasured'])], ['hypothesis'])[0]!, /unmeasured/);
  assert.deepEqual(gateFailures([run(false, ['fail'])], ['metastable']), []);
  assert.match(gateFailures([run(true, [])], ['metastable'])[0]!, /metastable/);
  assert.match(gateFailures([run(null, [])], ['metastable'])[0]!, /unmeasured/);
  assert.doesNotThrow(() => enforceGate([run(true, ['fail'])], undefined));
  assert.throws(
    () => enforceGate([run(true, ['pass'])], ['metastable']),
    (e: unknown) => e instanceof BenchError && e.exitCode === ExitCode.verdict,
  );
});
