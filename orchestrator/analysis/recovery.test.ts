import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyzeRecovery, type RecoveryInput } from './recovery.js';

// A 100/s baseline for 20 s, a trigger from 20 to 30 s, then `after` per second.
function series(after: number[]): number[] {
  return [...Array<number>(20).fill(100), ...Array<number>(10).fill(0), ...after];
}
const base: Omit<RecoveryInput, 'goodput' | 'observedEndS'> = {
  baselineGoodputPerS: 100,
  triggerEndS: 30,
  triggerDurationS: 10,
  windowS: 5,
  holdS: 10,
  tolerance: 0.1,
  within: 5,
};

test('recovers: the first point where the trailing window reaches 90% of baseline and holds', () => {
  const after = [...Array<number>(3).fill(0), ...Array<number>(80).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  // Goodput returns at 33 s; the 5 s trailing window is fully good at 38 s; at 37 s it is 4/5 = 80%.
  assert.equal(r.recoveryTimeS, 8);
  assert.equal(r.metastable, false);
  assert.equal(r.recoveryDeadlineS, 50);
});

test('never recovers within a long enough observation: metastable', () => {
  const after = Array<number>(120).fill(5);
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 150 });
  assert.equal(r.recovered, false);
  assert.equal(r.recoveryTimeS, null);
  assert.equal(r.metastable, true);
  assert.match(r.reason, /not recovered within the observed 120 s/);
});

test('recovers, then relapses within the hold period: not a recovery there', () => {
  // Good for 8 s (less than the 10 s hold), bad again, then good for good at 60 s.
  const after = [...Array<number>(8).fill(100), ...Array<number>(22).fill(0), ...Array<number>(60).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 35); // window over [60, 65) s is good at 65 s
  assert.equal(r.metastable, false);
});

test('a 3 s relapse inside the hold pulls the window under and restarts the clock', () => {
  const good = Array<number>(100).fill(100);
  // Good 30–38 s, nothing 38–41 s, good again from 41 s.
  const after = [...good.slice(0, 8), 0, 0, 0, ...good];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  // The first 5 s window clear of the relapse ends at 46 s; it then holds to 56 s.
  assert.equal(r.recoveryTimeS, 16);
});

test('a relapse after the hold period does not undo a recovery', () => {
  const good = Array<number>(100).fill(100);
  const after = [...good.slice(0, 20), 0, 0, 0, ...good];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recoveryTimeS, 5);
});

test('recovery later than k × trigger duration is metastable', () => {
  const after = [...Array<number>(60).fill(0), ...Array<number>(40).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 130 });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 65);
  assert.equal(r.metastable, true);
});

test('the trigger ends at the last sample: not recovered, verdict unmeasured', () => {
  const r = analyzeRecovery({ ...base, goodput: series([]), observedEndS: 30 });
  assert.equal(r.recovered, false);
  assert.equal(r.observedAfterS, 0);
  assert.equal(r.metastable, null);
  assert.match(r.reason, /unmeasured/);
});

test('an observation shorter than the deadline plus hold cannot call it metastable', () => {
  const r = analyzeRecovery({ ...base, goodput: series(Array<number>(40).fill(0)), observedEndS: 70 });
  assert.equal(r.recovered, false);
  assert.equal(r.metastable, null);
});

test('no baseline goodput: unmeasured, never a pass', () => {
  const r = analyzeRecovery({
    ...base,
    baselineGoodputPerS: 0,
    goodput: series(Array<number>(100).fill(100)),
    observedEndS: 130,
  });
  assert.equal(r.metastable, null);
  assert.equal(r.recovered, false);
});
