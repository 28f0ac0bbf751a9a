import { test } from 'node:test';
import assert from 'node:assert/strict';
import { referenceSim, type ReferenceCounts } from './referenceSim.js';
import { referenceQueue, runSim, type QueueScenario } from './simRun.js';

// The yardstick must simulate the same physics as `metabench run --runtime sim`, or the
// benchmark's "within 2× of the reference" compares two different problems. A short
// version of the benchmark's experiment (100 s), both ways, on both sides of the edge.
const recovers: QueueScenario = { workers: 100, warmupS: 10, baselineS: 30, observeS: 50 };
const collapses: QueueScenario = { ...recovers, workers: 25 };

const mean = (c: ReferenceCounts, fromS: number, toS: number): number =>
  c.okPerS.subarray(fromS, toS).reduce((a, b) => a + b, 0) / (toS - fromS);

/** The reference's goodput in the summary's phases, and its verdict: back within 10% of the baseline by the end. */
function phases(
  s: QueueScenario,
  c: ReferenceCounts,
): { baseline: number; after: number; recovered: boolean } {
  const pauseEnd = s.warmupS + s.baselineS + 10;
  const baseline = mean(c, s.warmupS, s.warmupS + s.baselineS);
  const end = pauseEnd + s.observeS;
  return { baseline, after: mean(c, pauseEnd, end), recovered: mean(c, end - 10, end) >= 0.9 * baseline };
}

for (const [name, s, recovered] of [
  ['recovers', recovers, true],
  ['collapses', collapses, false],
] as const)
  test(`the reference simulation's goodput per phase is metabench's (${s.workers} workers: ${name})`, () => {
    const ours = runSim(s, ['--events', 'none']).summary;
    const counts = referenceSim(referenceQueue(s));
    const ref = phases(s, counts);
    // At this length metabench may call a collapse `unmeasured` (the recovery deadline is past the end): not recovered either way.
    assert.equal(ours.recovered === true, recovered, `metabench: ${ours.outcome}`);
    assert.equal(ref.recovered, recovered, `reference: ${JSON.stringify(ref)}`);
    // Both see the same Poisson 1,000/s: baselines within 3% (sampling noise of 30 s is ~0.5%).
    assert.ok(
      Math.abs(ref.baseline - ours.baseline!.goodputPerS) <= 30,
      `${ref.baseline} vs ${ours.baseline!.goodputPerS}`,
    );
    // After the pause: the reference leaves out the listen backlog's SYN retries, which
    // move a few answers in time; within 5% of the offered rate.
    assert.ok(
      Math.abs(ref.after - ours.afterTrigger!.goodputPerS) <= 50,
      `${ref.after} vs ${ours.afterTrigger!.goodputPerS}`,
    );
    // Attempts per origin over the whole run (1.29 recovering, 2.8 collapsed): within 3%.
    const amplification = [counts.attempts / counts.origins, ours.attempts / ours.offered];
    assert.ok(Math.abs(amplification[0]! / amplification[1]! - 1) <= 0.03, `${amplification.join(' vs ')}`);
  });

test('the reference simulation is seeded: the same seed the same counts, another seed others', () => {
  const q = referenceQueue({ workers: 25, warmupS: 1, baselineS: 4, observeS: 5 });
  const a = referenceSim(q);
  const b = referenceSim(q);
  const c = referenceSim({ ...q, seed: 43 });
  assert.deepEqual([a.origins, a.attempts, [...a.okPerS]], [b.origins, b.attempts, [...b.okPerS]]);
  assert.notDeepEqual([a.origins, a.attempts], [c.origins, c.attempts]);
  // The pause (5-15 s of 20) answers nothing while it lasts.
  assert.deepEqual([...a.okPerS.subarray(6, 15)], new Array(9).fill(0));
  assert.ok(a.okPerS[2]! > 800, `${a.okPerS[2]}`);
});
