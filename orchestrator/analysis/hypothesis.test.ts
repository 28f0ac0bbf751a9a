import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gateFailures } from '../cli/failOn.js';
import { SpecError } from '../../foundation/errors.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { aggregateRuns } from './aggregate.js';
import type { RunSummary } from './summary.js';
import { syntheticRun } from '../../test/helpers/syntheticRun.js';

const FILE = (hypothesis: string, mix = true) =>
  [
    'name: classes',
    'lab:',
    '  api:',
    '    workers: 4',
    '    work: { dist: constant, mean: 10ms }',
    '    costs: { heavy: { dist: constant, mean: 200ms } }',
    'load:',
    '  rate: 10/s',
    ...(mix
      ? ['  mix:', '    - { name: read, share: 80% }', '    - { name: heavy, share: 20%, cost: heavy }']
      : []),
    'client: { timeout: 3s }',
    'hypothesis:',
    ...hypothesis.split('\n').map((l) => `  ${l}`),
    'schedule:',
    '  warmup: 2s',
    '  baseline: 10s',
    '  trigger: { kind: pause, target: api, duration: 2s }',
    '  observe: 20s',
    'recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }',
  ].join('\n');

const HYP = [
  "goodput: '>= 95% offered'",
  "p99: '<= 400ms'",
  'classes:',
  "  heavy: { p99: '<= 2s', errorRatio: '<= 5%' }",
].join('\n');

function issues(text: string): SpecError['issues'] {
  try {
    parseExperiment(text, 'x.yaml');
  } catch (err) {
    assert.ok(err instanceof SpecError);
    return err.issues;
  }
  assert.fail('expected the file to be refused');
}

test('per-class thresholds name classes of load.mix: an unknown one is refused with a did-you-mean', () => {
  const e = parseExperiment(FILE(HYP), 'x.yaml');
  assert.deepEqual(e.hypothesis.classes, { heavy: { p99: '<= 2s', errorRatio: '<= 5%' } });

  const typo = issues(FILE(HYP.replace('heavy: {', 'hevy: {')));
  assert.equal(typo.length, 1);
  assert.equal(typo[0]!.path, 'hypothesis.classes.hevy');
  assert.match(typo[0]!.message, /no request class "hevy" in load\.mix; did you mean "heavy"\?/);
  assert.ok(typo[0]!.line !== undefined && typo[0]!.line > 10, 'located in the file');

  const noMix = issues(
    FILE(HYP, false).replace('    costs: { heavy: { dist: constant, mean: 200ms } }\n', ''),
  );
  assert.match(noMix[0]!.message, /per-class thresholds need request classes: declare load\.mix/);

  // A metric typo inside a class is an unknown field, with its did-you-mean.
  const metric = issues(FILE(HYP.replace("p99: '<= 2s'", "pp99: '<= 2s'")));
  assert.equal(metric[0]!.path, 'hypothesis.classes.heavy.pp99');
  assert.match(metric[0]!.message, /did you mean "p99"/);
  // A class's threshold is checked like a global one.
  assert.match(
    issues(FILE(HYP.replace("errorRatio: '<= 5%'", "errorRatio: '<= 5ms'")))[0]!.message,
    /percentage/,
  );
});

/**
 * A synthetic run of the experiment above, fed straight into a Recorder: 10 origins a
 * second (8 read, 2 heavy), read answered in 50 ms and heavy in `heavyMs`; during the
 * trigger (12-14 s) and, when `collapse`, ever after, every origin times out; after
 * the trigger, `heavyFail` of the heavy origins fail.
 */
function syntheticHeavyRun(opts: { heavyMs: number; heavyFail: number; collapse: boolean }): RunSummary {
  const e = parseExperiment(FILE(HYP), 'x.yaml');
  const plan = planRun(e, { scale: 1, run: 1 });
  let heavySeen = 0;
  return syntheticRun(plan, {
    classes: ['read', 'heavy'],
    windows: [
      { name: 'warmup', ...plan.phases.warmup },
      { name: 'baseline', ...plan.phases.baseline },
      { name: 'trigger', ...plan.phases.trigger },
      { name: 'afterTrigger', startMs: plan.phases.trigger.endMs, endMs: plan.phases.observe.endMs },
    ],
    answer: (i, t) => {
      const cls = i % 5 === 4 ? 1 : 0;
      const down = (t >= 12_000 && t < 14_000) || (opts.collapse && t >= 12_000);
      const fail = down || (cls === 1 && t >= 14_000 && heavySeen++ % Math.round(1 / opts.heavyFail) === 0);
      return { cls, kind: fail ? 'timeout' : 'ok', ms: fail ? 3000 : cls === 1 ? opts.heavyMs : 50 };
    },
  });
}

test('each threshold is judged in the baseline and after recovery, globally and per request class', () => {
  const s = syntheticHeavyRun({ heavyMs: 1500, heavyFail: 0.1, collapse: false });
  // The global p99 fails in the baseline by design, so the run is invalid (no verdict);
  // every threshold is judged all the same, after the recovery point too.
  assert.equal(s.outcome, 'invalid');
  assert.deepEqual(
    s.validity.failed.map((f) => f.check),
    ['baseline'],
  );
  const key = (h: RunSummary['hypothesis'][number]) => `${h.window} ${h.class ?? 'all'} ${h.metric}`;
  assert.deepEqual(
    s.hypothesis.map((h) => `${key(h)}: ${h.verdict}`),
    [
      'baseline all goodput: pass',
      // heavy takes 1.5 s: 20% of origins above 400 ms, so the global p99 fails...
      'baseline all p99: fail',
      // ...while heavy's own threshold is 2 s.
      'baseline heavy p99: pass',
      'baseline heavy errorRatio: pass',
      'afterRecovery all goodput: pass',
      'afterRecovery all p99: fail',
      'afterRecovery heavy p99: pass',
      // After the trigger 1 in 10 heavy origins fails: 10% > 5%.
      'afterRecovery heavy errorRatio: fail',
    ],
  );
  const by = (k: string) => s.hypothesis.find((h) => key(h) === k)!;
  // Per-class figures are that class's alone: heavy's p99 is its 1.5 s, its samples its 2 a second.
  assert.ok(Math.abs(by('baseline heavy p99').value! - 1500) < 1); // HdrHistogram: 3 significant digits
  assert.equal(by('baseline heavy p99').samples, 20);
  assert.equal(by('baseline all p99').samples, 100);
  const ratio = by('afterRecovery heavy errorRatio').value!;
  // By completion time in the window, which starts a second after the trigger's end: 1 in
  // 10 of heavy's own, plus the 4 heavy origins of the trigger window that time out after
  // it (3 s): about (4 + 4) / 42.
  assert.equal(s.recoveryTimeS, null); // invalid: no verdict, though the recovery point is judged
  assert.ok(ratio > 0.15 && ratio < 0.25, `about 8 in 42: ${ratio}`);
  // The after-recovery window runs from the recovery point to the end of the observation.
  const span = by('afterRecovery all p99').span!;
  assert.equal(span.endS, 34);
  // 14 s: heavy's 1.5 s answers leave [14, 19) at 8.8/s, under 90% of 10/s; [15, 20) is at 10/s.
  assert.equal(span.startS, 15);
  assert.deepEqual(by('baseline all p99').span, { startS: 2, endS: 12 });
  // --fail-on hypothesis names the class and the window.
  assert.deepEqual(gateFailures([s], ['hypothesis']), [
    'run 1: hypothesis p99 <= 400ms in the baseline: fail',
    'run 1: hypothesis p99 <= 400ms after recovery: fail',
    'run 1: hypothesis heavy errorRatio <= 5% after recovery: fail',
  ]);
  // Repetitions line up by entry, class included.
  const a = aggregateRuns([s, s]);
  assert.equal(a.hypothesis.length, 8);
  assert.deepEqual(a.hypothesis[7]!.verdicts, { pass: 0, fail: 2, unmeasured: 0, of: 2 });
  assert.equal((a.hypothesis[7] as { class?: string }).class, 'heavy');
});

test('a run that does not recover has no after-recovery window: those verdicts are unmeasured, never a pass', () => {
  const s = syntheticHeavyRun({ heavyMs: 100, heavyFail: 0.1, collapse: true });
  assert.equal(s.recovered, false);
  const after = s.hypothesis.filter((h) => h.window === 'afterRecovery');
  assert.equal(after.length, 4);
  for (const h of after) {
    assert.equal(h.verdict, 'unmeasured');
    assert.equal(h.samples, 0);
    assert.equal(h.value, null);
    assert.equal(h.span, null);
    assert.match(h.note ?? '', /no recovery point/);
  }
  // The baseline is still judged (heavy at 100 ms: every global threshold passes).
  assert.ok(s.hypothesis.filter((h) => h.window === 'baseline').every((h) => h.verdict === 'pass'));
  const gate = gateFailures([s], ['hypothesis']);
  assert.equal(gate.length, 4);
  assert.ok(gate.every((g) => /after recovery: unmeasured/.test(g)));
});
