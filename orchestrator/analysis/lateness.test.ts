import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareReplays, countsAgree, latenessVerdict, type ReplayFigures } from './lateness.js';
import { judgeValidity, validityLimits, type LatenessVerdict, type ValidityInput } from './validity.js';
import { planOfFile } from '../../test/helpers/plan.js';
import { STEADY } from '../../test/helpers/steady.js';

const metastable: ReplayFigures = {
  outcome: 'metastable',
  failed: [],
  afterTriggerS: 36,
  offeredPerS: 278,
  goodputPerS: 0,
  amplification: 4,
  recoveryTimeS: null,
};
const recovered: ReplayFigures = {
  ...metastable,
  outcome: 'recovered',
  goodputPerS: 278,
  amplification: 1,
  recoveryTimeS: 0.4,
};
const W = { recoveryWindowS: 1 };

test('counts agree within 3 Poisson SDs of their difference, or 5% of the larger', () => {
  // About 10 000 events: 5% of the larger (526) is wider than 3√(n₁ + n₂) (430).
  assert.deepEqual(countsAgree(10_000, 10_520), { agree: true, band: 526 });
  assert.equal(countsAgree(10_000, 10_560).agree, false);
  // About 100 events: 3√(n₁ + n₂) (47) is the wider.
  assert.equal(countsAgree(100, 147).agree, true);
  assert.equal(countsAgree(100, 149).agree, false);
  assert.equal(countsAgree(0, 0).agree, true);
});

test('the same outcome and figures within noise: lateness harmless', () => {
  const r = compareReplays(metastable, { ...metastable, amplification: 3.99 }, W);
  assert.equal(r.verdict, 'harmless');
  assert.deepEqual(r.differences, []);
  const v = latenessVerdict(r);
  assert.equal(v.kind, 'replayed');
  assert.match(
    (v as Extract<LatenessVerdict, { kind: 'replayed' }>).value,
    /^replay with the actual send times: metastable, goodput 0\/s, amplification 3\.99, recovery –; with the intended: metastable, goodput 0\/s, amplification 4, recovery –: lateness harmless$/,
  );
});

test('recovered and recovered-late are one class; a recovery time more than W apart is a change', () => {
  assert.equal(
    compareReplays(recovered, { ...recovered, outcome: 'recovered-late', recoveryTimeS: 1.2 }, W).verdict,
    'harmless',
  );
  const r = compareReplays(recovered, { ...recovered, outcome: 'recovered-late', recoveryTimeS: 3.6 }, W);
  assert.equal(r.verdict, 'changed');
  assert.deepEqual(r.differences, [
    'recovery time: 3.6 s with the actual send times, 0.4 s with the intended (apart by more than the 1 s recovery window)',
  ]);
});

test('another outcome class, or a figure beyond its noise: lateness changed the outcome, each difference named', () => {
  const r = compareReplays(recovered, metastable, W);
  assert.equal(r.verdict, 'changed');
  assert.equal(
    r.differences[0],
    'outcome metastable with the actual send times, recovered with the intended',
  );
  assert.ok(
    r.differences.some((d) =>
      d.startsWith('goodput after the trigger: 0/s with the actual send times, 278/s'),
    ),
  );
  assert.ok(r.differences.some((d) => d.startsWith('amplification after the trigger: 4 with the actual')));
  // The same class, but goodput 20% lower over 36 s (10 008 against 8 006 successes).
  const g = compareReplays(recovered, { ...recovered, goodputPerS: 222.4 }, W);
  assert.equal(g.verdict, 'changed');
  assert.equal(g.differences.length, 1);
  assert.equal(latenessVerdict(g).kind, 'replayed');
});

test('an invalid twin: with the intended send times nothing can be judged; with the actual ones lateness changed it', () => {
  const bad = {
    ...metastable,
    outcome: 'invalid' as const,
    failed: ['the steady-state hypothesis held in the baseline: p99 512 (fail)'],
  };
  const u = compareReplays(bad, metastable, W);
  assert.equal(u.verdict, 'unjudged');
  assert.deepEqual(latenessVerdict(u), {
    kind: 'unmodelled',
    why: 'the lateness replay could not judge: the twin with the intended send times was itself invalid (the steady-state hypothesis held in the baseline: p99 512 (fail))',
  });
  assert.equal(compareReplays(metastable, bad, W).verdict, 'changed');
});

/** Validity input of a clean run of retry-storm (every other check passes), with its lateness. */
function input(lagP99Ms: number, lagMaxMs: number, lateness?: LatenessVerdict): ValidityInput {
  const e = planOfFile('retry-storm', { scale: 0.2 }).experiment;
  return {
    limits: validityLimits(e),
    offered: 100,
    recorded: 100,
    unsent: 0,
    baselineHypothesis: STEADY,
    triggers: [],
    phases: [],
    lagP99Ms,
    lagSamples: 100,
    lagMaxMs,
    ...(lateness ? { lateness } : {}),
    generatorCpu: null,
  };
}
const harmless = latenessVerdict(compareReplays(metastable, metastable, W));
const lagOf = (v: ReturnType<typeof judgeValidity>) => v.checks.find((c) => c.check === 'lag')!;

test("check 4: a harmless replay makes a run valid though its lag p99 is above the old fixed limit (retry-storm's 13.1 ms against 10 ms)", () => {
  const v = judgeValidity(input(13.1, 19, harmless));
  assert.equal(v.limits.lagP99Ms, 10);
  assert.equal(v.valid, true);
  assert.match(String(lagOf(v).value), /lateness harmless$/);
  assert.equal(
    lagOf(v).limit,
    'the same outcome class and figures within their noise; no first attempt later than the 500 ms attempt timeout',
  );
  // The same lag without a replay: the fixed limit fails it.
  assert.equal(judgeValidity(input(13.1, 19)).valid, false);
});

test('check 4: lateness beyond the client timeout is never harmless, whatever the replay says', () => {
  const v = judgeValidity(input(13.1, 612.5, harmless));
  assert.equal(v.valid, false);
  assert.deepEqual(
    v.failed.map((f) => f.check),
    ['lag'],
  );
  assert.match(
    String(lagOf(v).value),
    /a first attempt was sent 612\.5 ms late, beyond the 500 ms attempt timeout: lateness beyond it is never harmless$/,
  );
  // … and on the fixed limit's path too, with its p99 within the limit.
  const f = judgeValidity(input(2, 612.5, { kind: 'unmodelled', why: 'x' }));
  assert.equal(f.valid, false);
});

test('check 4: a replay that found lateness changed the outcome makes the run invalid, with what changed', () => {
  const changed = latenessVerdict(compareReplays(recovered, metastable, W));
  const v = judgeValidity(input(300, 450, changed));
  assert.equal(v.valid, false);
  assert.match(
    String(lagOf(v).value),
    /lateness changed outcome metastable with the actual send times, recovered with the intended/,
  );
});

test('check 4: an experiment the simulation does not model keeps the fixed limit, and says why', () => {
  const why = 'the simulation does not model this experiment (its lab has an LLM provider)';
  const bad = judgeValidity(input(13.1, 19, { kind: 'unmodelled', why }));
  assert.equal(bad.valid, false);
  assert.equal(lagOf(bad).what, `schedule lag p99 of first attempts, ms (the fixed limit: ${why})`);
  assert.equal(lagOf(bad).value, 13.1);
  assert.equal(lagOf(bad).limit, 10);
  assert.equal(judgeValidity(input(5, 19, { kind: 'unmodelled', why })).valid, true);
});

test("check 4 of a replay itself: its lateness and rate are imposed from the lab's record, not judged again", () => {
  const v = judgeValidity({
    ...input(450, 1500, { kind: 'imposed' }),
    phases: [{ phase: 'baseline', seconds: 12, expected: 3360, achieved: 2000 }],
  });
  assert.equal(v.valid, true);
  assert.deepEqual(
    v.checks.filter((c) => c.check === 'rate' || c.check === 'lag').map((c) => [c.check, c.value]),
    [
      ['rate', "imposed: the lab run's actual send times (a lateness replay)"],
      ['lag', "imposed: the lab run's actual send times (a lateness replay)"],
    ],
  );
});
