import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_RULE, judgeSteps, type StepFigures } from './saturation.js';

/** A step at `rate` with goodput `g` (per s) and p99 `p99` ms; offered as declared. */
const step = (rate: number, g: number, p99: number | null, offered = rate): StepFigures => ({
  ratePerS: rate,
  offeredPerS: offered,
  goodputPerS: g,
  latencyMs: { samples: p99 === null ? 0 : Math.round(g * 10), p99 },
});

test('a system that saturates: the saturation point is the highest sustained step, the next is why', () => {
  // A 200/s system: goodput follows offered up to 180, then flattens and collapses; p99 explodes.
  const steps = [
    step(40, 40, 22),
    step(80, 79.8, 24),
    step(120, 119.5, 30),
    step(160, 158, 60),
    step(180, 175, 120),
    step(200, 170, 480),
    step(240, 60, 500),
  ];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'saturated');
  assert.equal(r.saturationIndex, 4);
  assert.equal(steps[r.saturationIndex!]!.ratePerS, 180);
  assert.equal(r.aboveIndex, 5);
  assert.equal(r.referenceP99Ms, 22);
  assert.deepEqual(r.anomalies, []);
  assert.equal(r.peakGoodputIndex, 4);
  assert.deepEqual(
    r.judgements.map((j) => j.sustained),
    [true, true, true, true, true, false, false],
  );
  // 170 < 95% of 200 and 480 > 10 x 22: both reasons are given.
  assert.equal(r.judgements[5]!.why.length, 2);
  assert.match(r.judgements[5]!.why[0]!, /goodput 170\/s < 95% of the 200\/s offered/);
  assert.match(r.judgements[5]!.why[1]!, /p99 480 ms > 10 x 22 ms/);
  assert.match(r.reason, /sustained up to 180\/s/);
});

test('the input order does not matter (refinement steps come last)', () => {
  const steps = [step(100, 100, 20), step(300, 120, 900), step(200, 199, 40), step(250, 240, 150)];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'saturated');
  assert.equal(steps[r.saturationIndex!]!.ratePerS, 250);
  assert.equal(steps[r.aboveIndex!]!.ratePerS, 300);
});

test('a system that never saturates within the steps: not reached, with its lower bound', () => {
  const steps = [step(50, 50, 20), step(100, 99.9, 21), step(150, 149.5, 23), step(200, 198, 25)];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'not-reached');
  assert.equal(r.saturationIndex, null);
  assert.equal(steps[r.highestSustainedIndex!]!.ratePerS, 200);
  assert.match(r.reason, /highest step \(200\/s\) was sustained/);
});

test('a system saturated below the lowest step: no sustained step', () => {
  const steps = [step(500, 200, 450), step(1000, 50, 500)];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'below-lowest-step');
  assert.equal(r.saturationIndex, null);
  assert.match(r.reason, /below the lowest step \(500\/s\)/);
});

test('noise: an unsustained step below a sustained one is an anomaly and does not move the point', () => {
  // 120/s suffered a pause (p99 spike); 160 and 180 were fine; 200 is above capacity.
  const steps = [
    step(40, 40, 20),
    step(80, 80, 22),
    step(120, 119, 260),
    step(160, 158.5, 50),
    step(180, 176, 90),
    step(200, 150, 500),
  ];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'saturated');
  assert.equal(steps[r.saturationIndex!]!.ratePerS, 180);
  assert.deepEqual(
    r.anomalies.map((i) => steps[i]!.ratePerS),
    [120],
  );
});

test('Poisson offered counts: goodput is judged against what was offered in the window, not the declared rate', () => {
  // The 150/s step happened to offer 160/s; 157 of it succeeded: sustained.
  const r = judgeSteps([step(100, 99, 20), step(150, 157, 30, 160), step(200, 160, 400, 205)]);
  assert.equal(r.judgements[1]!.sustained, true);
  // Declared 150, offered 150, goodput 140: 93% < 95%: not sustained.
  const r2 = judgeSteps([step(100, 99, 20), step(150, 140, 30, 150)]);
  assert.equal(r2.judgements[1]!.sustained, false);
});

test('the latency criterion alone: goodput kept (a generous timeout), latency exploded', () => {
  const steps = [step(100, 100, 20), step(150, 149, 150), step(180, 178, 250)];
  const r = judgeSteps(steps);
  assert.equal(r.status, 'saturated');
  assert.equal(steps[r.saturationIndex!]!.ratePerS, 150);
  assert.match(r.judgements[2]!.why.join(), /p99 250 ms > 10 x 20 ms/);
  // With a looser factor, the same steps are all sustained.
  assert.equal(judgeSteps(steps, { ...DEFAULT_RULE, latencyFactor: 20 }).status, 'not-reached');
});

test('a step without successes or without offered origins is not sustained; the reference is the lowest step with a success', () => {
  const steps = [
    { ratePerS: 10, offeredPerS: 0, goodputPerS: 0, latencyMs: { samples: 0, p99: null } },
    step(50, 50, 30),
    step(100, 0, null),
  ];
  const r = judgeSteps(steps);
  assert.equal(r.referenceP99Ms, 30);
  assert.deepEqual(
    r.judgements.map((j) => j.sustained),
    [false, true, false],
  );
  assert.equal(r.status, 'saturated');
  assert.deepEqual(r.anomalies, [0]);
});
