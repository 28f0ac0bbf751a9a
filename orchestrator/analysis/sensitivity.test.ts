import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRecovery, type RecoveryInput } from './recovery.js';
import { classifyOutcome, type OutcomeInput } from './outcome.js';
import {
  criterionSensitivity,
  describeSensitivity,
  noiseFloor,
  tallySensitivity,
  type CriterionSensitivity,
  type SensitivityInput,
} from './sensitivity.js';
import type { Validity } from './validity.js';
import { summarizeRun, type RunSummary } from './summary.js';
import { Recorder } from '../../bench/record/Recorder.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';

/**
 * Synthetic goodput series whose answer is known: a baseline of `base`/s for 30 s, a
 * trigger from 30 to 40 s (D = 10 s) with no goodput, then `after` per second for 200 s
 * (long enough to judge k = 10: 100 s + hold + window).
 */
const D = 10;
const END = 40;
function series(base: number, after: (s: number) => number): number[] {
  return [
    ...Array<number>(30).fill(base),
    ...Array<number>(D).fill(0),
    ...Array.from({ length: 200 }, (_, i) => after(i)),
  ];
}

const valid: Validity = { valid: true, limits: {} as Validity['limits'], checks: [], failed: [] };

function input(
  goodput: number[],
  base: number,
  over: Partial<RecoveryInput> = {},
  validity: Validity = valid,
): SensitivityInput {
  const recovery: RecoveryInput = {
    goodput,
    baselineGoodputPerS: base,
    triggerEndS: END,
    triggerDurationS: D,
    observedEndS: goodput.length,
    windowS: 5,
    holdS: 10,
    tolerance: 0.1,
    within: 5,
    ...over,
  };
  const outcome: Omit<OutcomeInput, 'recovery'> = {
    validity,
    goodputPerS: goodput,
    backlog: null,
    triggerEndS: END,
    observedEndS: goodput.length,
    // A retry storm's figures over the tail: four times the capacity arrives.
    sustaining: {
      capacityPerS: 400,
      receivedPerS: 1600,
      attemptsPerS: 1600,
      amplification: 4,
      amplificationServer: 4,
      cacheHitRatio: null,
      baselineCacheHitRatio: null,
      errorRatio: 0.9,
    },
  };
  return { recovery, outcome };
}

/** The run's own outcome, straight from analyzeRecovery and classifyOutcome. */
function ownOutcome(x: SensitivityInput): string {
  return classifyOutcome({ ...x.outcome, recovery: analyzeRecovery(x.recovery) }).outcome;
}

function cell(s: CriterionSensitivity, k: number, tolerance: number) {
  const c = s.cells.find((c) => c.k === k && c.tolerance === tolerance);
  assert.ok(c, `cell k=${k} tolerance=${tolerance}`);
  return c;
}

test('a run that recovers at 3 × D: recovered-late with k = 2, recovered with k = 5 and 10; the sentence names k', () => {
  // Goodput returns 30 s (3 × D) after the trigger's end.
  const s = criterionSensitivity(
    input(
      series(1000, (i) => (i < 30 ? 0 : 1000)),
      1000,
    ),
  )!;
  assert.deepEqual(s.ks, [2, 5, 10]);
  assert.deepEqual(s.tolerances, [0.05, 0.1, 0.2]);
  for (const t of s.tolerances) {
    assert.equal(cell(s, 2, t).outcome, 'recovered-late');
    assert.equal(cell(s, 5, t).outcome, 'recovered');
    assert.equal(cell(s, 10, t).outcome, 'recovered');
  }
  assert.equal(cell(s, 5, 0.1).recoveryTimeS, 30);
  assert.equal(
    s.sentence,
    'flips: recovered-late with k = 2, recovered with k ≥ 5; tolerance does not matter',
  );
});

test('a storm that never recovers is robust, and the run’s own cell is marked and is its outcome', () => {
  const x = input(
    series(1000, () => 50),
    1000,
  );
  const s = criterionSensitivity(x)!;
  const own = ownOutcome(x);
  assert.ok(own !== 'recovered' && own !== 'recovered-late', own);
  assert.ok(s.cells.every((c) => c.allowed && c.outcome === own));
  assert.deepEqual(
    s.cells.filter((c) => c.own).map((c) => [c.k, c.tolerance]),
    [[5, 0.1]],
  );
  assert.equal(s.sentence, `robust: ${own} under every allowed criterion`);
});

test('goodput settling at 88% of baseline: recovered with tolerance 20%, not with 5% or 10%; the sentence names tolerance', () => {
  const x = input(
    series(1000, () => 880),
    1000,
  );
  const s = criterionSensitivity(x)!;
  const own = ownOutcome(x);
  for (const k of s.ks) {
    assert.equal(cell(s, k, 0.2).outcome, 'recovered');
    assert.equal(cell(s, k, 0.2).recoveryTimeS, 0);
    assert.equal(cell(s, k, 0.05).outcome, own);
    assert.equal(cell(s, k, 0.1).outcome, own);
  }
  assert.ok(own !== 'recovered' && own !== 'recovered-late', own);
  assert.equal(
    s.sentence,
    `flips: ${own} with tolerance ≤ 10%, recovered with tolerance = 20%; k does not matter`,
  );
});

test('tolerances below the noise floor 3/√(g·W) are not computed, and carry the floor', () => {
  // 100/s over a 5 s window: 3/√500 = 13.4%, so 5% and 10% are below it.
  assert.equal(noiseFloor(100, 5)!.toFixed(4), '0.1342');
  assert.equal(noiseFloor(null, 5), null);
  assert.equal(noiseFloor(100, 0.4), 0.3); // a window is whole seconds, at least one
  const s = criterionSensitivity(
    input(
      series(100, () => 100),
      100,
      { tolerance: 0.2 },
    ),
  )!;
  assert.equal(s.noiseFloor, 0.1342);
  for (const k of s.ks) {
    for (const t of [0.05, 0.1]) {
      assert.equal(cell(s, k, t).allowed, false);
      assert.equal(cell(s, k, t).outcome, null);
    }
    assert.equal(cell(s, k, 0.2).allowed, true);
    assert.equal(cell(s, k, 0.2).outcome, 'recovered');
  }
  assert.equal(s.sentence, 'robust: recovered under every allowed criterion');
});

test('the run’s own criterion joins the grid where it falls, and is computed even below the noise floor', () => {
  const s = criterionSensitivity(
    input(
      series(100, () => 100),
      100,
      { within: 3, tolerance: 0.1 },
    ),
  )!;
  assert.deepEqual(s.ks, [2, 3, 5, 10]);
  assert.deepEqual(s.criterion, { k: 3, tolerance: 0.1 });
  const own = cell(s, 3, 0.1);
  assert.equal(own.own, true);
  assert.equal(own.allowed, true);
  assert.equal(own.outcome, 'recovered');
  assert.equal(cell(s, 5, 0.1).allowed, false);
});

test('an invalid run has no sensitivity table (it has no verdict)', () => {
  const invalid: Validity = {
    ...valid,
    valid: false,
    failed: [{ check: 'lag', what: 'schedule lag p99', value: 40, limit: 10 }],
  };
  assert.equal(
    criterionSensitivity(
      input(
        series(1000, () => 1000),
        1000,
        {},
        invalid,
      ),
    ),
    null,
  );
});

test('repetitions: each cell tallies the valid runs, and the sentence reads the tallies', () => {
  const late = criterionSensitivity(
    input(
      series(1000, (i) => (i < 30 ? 0 : 1000)),
      1000,
    ),
  )!;
  const fast = criterionSensitivity(
    input(
      series(1000, (i) => (i < 5 ? 0 : 1000)),
      1000,
    ),
  )!;
  const t = tallySensitivity([late, late, null, fast])!;
  assert.equal(t.runs, 3);
  const c2 = t.cells.find((c) => c.k === 2 && c.tolerance === 0.1)!;
  assert.deepEqual(c2.outcomes, { recovered: 1, 'recovered-late': 2 });
  assert.equal(c2.tally, 'recovered 1/3, recovered-late 2/3');
  assert.equal(t.cells.find((c) => c.k === 5 && c.tolerance === 0.1)!.tally, 'recovered 3/3');
  assert.equal(
    t.sentence,
    'flips: recovered 1/3, recovered-late 2/3 with k = 2, recovered 3/3 with k ≥ 5; tolerance does not matter',
  );
  const robust = tallySensitivity([fast, fast])!;
  assert.equal(robust.sentence, 'robust: recovered 2/2 under every allowed criterion');
  assert.equal(tallySensitivity([null, undefined]), null);
});

test('a cell is allowed across runs only where every run allowed it, under the highest floor', () => {
  const low = criterionSensitivity(
    input(
      series(1000, () => 1000),
      1000,
    ),
  )!;
  const high = criterionSensitivity(
    input(
      series(100, () => 100),
      100,
      { tolerance: 0.2 },
    ),
  )!;
  const t = tallySensitivity([{ ...low, criterion: high.criterion }, high])!;
  assert.equal(t.noiseFloor, high.noiseFloor);
  assert.equal(t.cells.find((c) => c.k === 5 && c.tolerance === 0.05)!.allowed, false);
  assert.equal(t.cells.find((c) => c.k === 5 && c.tolerance === 0.05)!.tally, null);
});

test('the sentence when both factors flip names each along the run’s own criterion', () => {
  const grid = { ks: [2, 5, 10], tolerances: [0.05, 0.1, 0.2], criterion: { k: 5, tolerance: 0.1 } };
  // Metastable with a tight tolerance and a short deadline; recovered otherwise.
  const label = (k: number, t: number) =>
    t < 0.2 && k < 10 ? 'metastable' : t < 0.2 ? 'recovered-late' : 'recovered';
  assert.equal(
    describeSensitivity(grid, label),
    'flips with both k and tolerance: at tolerance 10%, metastable with k ≤ 5, recovered-late with k = 10; at k = 5, metastable with tolerance ≤ 10%, recovered with tolerance = 20%',
  );
  // Three outcomes along k: the middle group is named by its range.
  const ks = { ...grid, ks: [1, 2, 5, 10, 20] };
  assert.equal(
    describeSensitivity(ks, (k) => (k < 2 ? 'recovered' : k < 20 ? 'recovered-late' : 'recovered')),
    'flips: recovered with k = 1, recovered-late with k from 2 to 10, recovered with k = 20; tolerance does not matter',
  );
  assert.equal(
    describeSensitivity(grid, (k, t) => (k === 5 && t === 0.1 ? 'metastable' : null)),
    'untested: every criterion but the run’s own has a tolerance below the noise floor',
  );
});

/**
 * Through the whole analysis (Recorder → summarizeRun): 500 origins a second evenly, each
 * succeeding but in the seconds `down` says; a 10 s pause from 40 to 50 s.
 */
function summarized(down: (s: number) => boolean, lagMs = 0): RunSummary {
  const e = parseExperiment(
    `
name: synthetic
lab: { api: { workers: 8, work: { dist: exponential, mean: 20ms } } }
load: { arrival: constant, rate: 500/s }
client: { timeout: 500ms }
hypothesis: { goodput: '>= 95% offered' }
schedule:
  warmup: 10s
  baseline: 30s
  trigger: { kind: pause, target: api, duration: 10s }
  observe: 120s
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 10s }
`,
    'synthetic.yaml',
  );
  const plan = planRun(e, { scale: 1, run: 1 });
  const p = plan.phases;
  const rec = new Recorder({
    windows: [
      { name: 'baseline', ...p.baseline },
      { name: 'afterTrigger', startMs: p.trigger.endMs, endMs: p.observe.endMs },
    ],
    retainFromMs: p.baseline.startMs,
  });
  let id = 0;
  const seconds = Math.round(plan.totalMs / 1000);
  for (let sec = 0; sec < seconds; sec++) {
    for (let k = 0; k < 500; k++) {
      const o = { id: id++, intendedMs: sec * 1000 + k * 2, deadlineMs: Infinity };
      rec.offered(o);
      const sentMs = o.intendedMs + lagMs;
      const r = {
        kind: down(sec) ? 'timeout' : 'ok',
        status: 0,
        sentMs,
        endMs: sentMs + 1,
        attempt: 1,
      } as const;
      rec.attempt({ origin: o, number: 1 }, r);
      rec.outcome(o, r);
    }
    rec.tick((sec + 1) * 1000);
  }
  return summarizeRun({
    plan,
    runtime: 'local',
    recorded: rec.close(),
    server: null,
    triggers: [
      {
        kind: 'pause',
        target: 'api',
        describe: 'pause api',
        plannedStartMs: p.trigger.startMs,
        startMs: p.trigger.startMs,
        endMs: p.trigger.endMs,
      },
    ],
    interrupted: false,
  });
}

test('summary.json carries the sensitivity: its own cell is the run’s outcome; an invalid run has none', () => {
  // Goodput returns 30 s (3 × D) after the pause ends at 50 s.
  const s = summarized((sec) => sec >= 40 && sec < 80);
  assert.equal(s.validity.valid, true, JSON.stringify(s.validity.failed));
  assert.equal(s.outcome, 'recovered');
  const sens = s.sensitivity!;
  assert.deepEqual(sens.criterion, { k: 5, tolerance: 0.1 });
  assert.equal(sens.cells.find((c) => c.own)!.outcome, s.outcome);
  assert.equal(sens.cells.find((c) => c.own)!.recoveryTimeS, s.recoveryTimeS);
  // 500/s over 5 s: floor 3/√2500 = 6%, so 5% is not computed.
  assert.equal(sens.noiseFloor, 0.06);
  assert.ok(sens.cells.filter((c) => c.tolerance === 0.05).every((c) => !c.allowed));
  assert.equal(
    sens.sentence,
    'flips: recovered-late with k = 2, recovered with k ≥ 5; tolerance does not matter',
  );
  const invalid = summarized((sec) => sec >= 40 && sec < 80, 50);
  assert.equal(invalid.outcome, 'invalid');
  assert.equal(invalid.sensitivity, null);
});
