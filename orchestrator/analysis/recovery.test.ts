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

test('recovers at the first second whose leading window reaches 90% of baseline and holds', () => {
  const after = [...Array<number>(3).fill(0), ...Array<number>(80).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  // Goodput returns at 33 s; the leading window [33, 38) is fully good; [32, 37) is 4/5 = 80%.
  assert.equal(r.recoveryTimeS, 3);
  assert.equal(r.recoveredAtS, 33);
  assert.equal(r.late, false);
  assert.equal(r.recoveryDeadlineS, 50);
});

test('healthy the instant the trigger ends: recovery time 0, not the window length', () => {
  const r = analyzeRecovery({ ...base, goodput: series(Array<number>(60).fill(100)), observedEndS: 90 });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 0);
  assert.match(r.reason, /never fell below/);
});

test('a trigger that ends between bucket boundaries: the first whole second after it qualifying is 0', () => {
  const r = analyzeRecovery({
    ...base,
    triggerEndS: 30.013,
    goodput: series(Array<number>(60).fill(100)),
    observedEndS: 90,
  });
  assert.equal(r.recoveryTimeS, 0);
  // Bucket 31 empty: the first qualifying second is 32, measured from the actual end.
  const late = analyzeRecovery({
    ...base,
    triggerEndS: 30.013,
    goodput: series([0, 0, ...Array<number>(60).fill(100)]),
    observedEndS: 92,
  });
  assert.equal(late.recoveryTimeS, 1.987);
});

test('never recovers: not recovered, with the threshold and observed time', () => {
  const after = Array<number>(120).fill(5);
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 150 });
  assert.equal(r.recovered, false);
  assert.equal(r.recoveryTimeS, null);
  assert.equal(r.thresholdPerS, 90);
  assert.equal(r.deadlineObserved, true);
  assert.match(r.reason, /not recovered to 90\/s within the observed 120 s/);
});

test('recovers, then relapses within the hold period: not a recovery there', () => {
  // Good for 8 s (less than the hold plus window), bad again, then good for good at 60 s.
  const after = [...Array<number>(8).fill(100), ...Array<number>(22).fill(0), ...Array<number>(60).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 30); // the leading window from 60 s
});

test('a 1 s dip inside the hold that keeps every leading window above the threshold does not matter', () => {
  // 5 s windows: one second at 60/s pulls a window to 92/s, still above 90/s.
  const after = [...Array<number>(4).fill(100), 60, ...Array<number>(60).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recoveryTimeS, 0);
});

test('a 3 s relapse inside the hold restarts the clock after it', () => {
  const good = Array<number>(100).fill(100);
  // Good 30–38 s, nothing 38–41 s, good again from 41 s.
  const after = [...good.slice(0, 8), 0, 0, 0, ...good];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 30 + after.length });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 11); // the first leading window clear of the relapse starts at 41 s
});

test('recovery later than k × trigger duration is late', () => {
  const after = [...Array<number>(60).fill(0), ...Array<number>(40).fill(100)];
  const r = analyzeRecovery({ ...base, goodput: series(after), observedEndS: 130 });
  assert.equal(r.recovered, true);
  assert.equal(r.recoveryTimeS, 60);
  assert.equal(r.late, true);
});

test('a recovery point needs its hold and window observed', () => {
  // Good from 30 s, but only 14 s observed: [t, t + 10] windows of 5 s need 15 s.
  const r = analyzeRecovery({ ...base, goodput: series(Array<number>(14).fill(100)), observedEndS: 44 });
  assert.equal(r.recovered, false);
  assert.equal(r.deadlineObserved, false);
});

test('no baseline goodput: nothing to recover to', () => {
  const r = analyzeRecovery({
    ...base,
    baselineGoodputPerS: 0,
    goodput: series(Array<number>(100).fill(100)),
    observedEndS: 130,
  });
  assert.equal(r.recovered, false);
  assert.equal(r.thresholdPerS, null);
});
