import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../analysis/summary.js';
import { BenchError } from '../../foundation/errors.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { enforceGate, gateFailures } from './failOn.js';

type V = 'pass' | 'fail' | 'unmeasured';

const run = (
  metastable: boolean | null,
  verdicts: V[],
  after: V[] = [],
  extra: Record<string, unknown>[] = [],
): RunSummary =>
  ({
    run: 1,
    metastable,
    recovered: metastable === false,
    outcome: metastable === true ? 'metastable' : metastable === false ? 'recovered' : 'unmeasured',
    outcomeReason: metastable === null ? 'too short to judge' : 'as measured',
    hypothesis: [
      ...verdicts.map((verdict) => ({ metric: 'p99', window: 'baseline', threshold: '<= 1s', verdict })),
      ...after.map((verdict) => ({ metric: 'p99', window: 'afterRecovery', threshold: '<= 1s', verdict })),
      ...extra,
    ],
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

test('--fail-on takes any outcome: invalid gates on invalid runs only; metastable also on runs not shown to recover', () => {
  const invalid = {
    ...run(null, []),
    recovered: false,
    outcome: 'invalid',
    outcomeReason: 'invalid run: schedule lag p99 of first attempts, ms: 37 (limit 10)',
  } as RunSummary;
  assert.match(gateFailures([invalid], ['invalid'])[0]!, /run 1: invalid \(invalid run: schedule lag p99/);
  assert.deepEqual(gateFailures([run(true, [])], ['invalid']), []);
  assert.match(gateFailures([invalid], ['metastable'])[0]!, /invalid/);
  const late = { ...run(false, []), outcome: 'recovered-late', recovered: true } as RunSummary;
  assert.equal(gateFailures([late], ['recovered-late']).length, 1);
  assert.deepEqual(gateFailures([late], ['metastable']), []);
  const slow = { ...run(false, []), outcome: 'not-recovered', recovered: false } as RunSummary;
  assert.equal(gateFailures([slow], ['not-recovered']).length, 1);
  assert.equal(gateFailures([slow], ['metastable']).length, 1);
});

test('--fail-on hypothesis considers the after-recovery window and every request class', () => {
  // A pass in the baseline but a failure after recovery fails the gate.
  const after = gateFailures([run(false, ['pass'], ['fail'])], ['hypothesis']);
  assert.equal(after.length, 1);
  assert.match(after[0]!, /p99 <= 1s after recovery: fail/);
  // A run that did not recover has no after-recovery window: unmeasured, which fails the gate.
  const none = gateFailures(
    [
      run(
        true,
        ['pass'],
        [],
        [
          {
            metric: 'p99',
            window: 'afterRecovery',
            threshold: '<= 1s',
            verdict: 'unmeasured',
            note: 'no recovery point: not recovered',
          },
        ],
      ),
    ],
    ['hypothesis'],
  );
  assert.equal(none.length, 1);
  assert.match(none[0]!, /after recovery: unmeasured \(no recovery point/);
  // A class's threshold is named with its class.
  const cls = gateFailures(
    [
      run(
        false,
        ['pass'],
        ['pass'],
        [{ metric: 'errorRatio', window: 'baseline', class: 'heavy', threshold: '<= 1%', verdict: 'fail' }],
      ),
    ],
    ['hypothesis'],
  );
  assert.deepEqual(cls, ['run 1: hypothesis heavy errorRatio <= 1% in the baseline: fail']);
  // Every entry passing, in both windows and for every class, passes the gate.
  assert.deepEqual(
    gateFailures(
      [
        run(
          false,
          ['pass'],
          ['pass'],
          [{ metric: 'p99', window: 'afterRecovery', class: 'heavy', threshold: '<= 2s', verdict: 'pass' }],
        ),
      ],
      ['hypothesis'],
    ),
    [],
  );
});

test('--fail-on hypothesis gates on per-class entries only through the hypothesis (the classes section has no verdicts)', () => {
  // A run whose classes section describes a class, and whose hypothesis holds a former
  // load.mix threshold (ttftP95, read into hypothesis.classes) that failed after recovery.
  const r = {
    ...run(
      false,
      ['pass'],
      ['pass'],
      [
        {
          metric: 'ttftP95',
          window: 'afterRecovery',
          class: 'chat',
          threshold: '<= 1500ms',
          verdict: 'fail',
        },
      ],
    ),
    classes: { definitions: '', classes: [{ name: 'chat', windows: {} }] },
  } as unknown as RunSummary;
  assert.deepEqual(gateFailures([r], ['hypothesis']), [
    'run 1: hypothesis chat ttftP95 <= 1500ms after recovery: fail',
  ]);
  assert.deepEqual(gateFailures([r], ['metastable']), []);
});
