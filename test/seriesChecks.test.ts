import assert from 'node:assert/strict';
import { test } from 'node:test';
import { memoryLevels } from './helpers/seriesChecks.js';

// The soak's leak check (test/repro/catalogue-other.test.ts) on series whose answer is known.

/** A heap that climbs by `step` MB a second and drops back to `floor` at each collection. */
function sawtooth(seconds: number, floor: number, periods: readonly number[], step: number): number[] {
  const out: number[] = [];
  let k = 0;
  let age = 0;
  for (let t = 0; t < seconds; t++) {
    out.push(floor + step * age);
    if (++age >= periods[k % periods.length]!) {
      age = 0;
      k++;
    }
  }
  return out;
}

test('a collected heap with no trend passes, even when its last third reaches a higher peak than its first', () => {
  // Short cycles early, one long cycle late: the peaks differ by 30%, the level does not.
  const xs = [
    ...sawtooth(24, 116, [3, 4], 3),
    ...sawtooth(24, 116, [3, 5], 3),
    ...sawtooth(24, 116, [4, 13], 3),
  ];
  const first = Math.max(...xs.slice(0, 24));
  const last = Math.max(...xs.slice(48));
  assert.ok(last > 1.2 * first, `the fixture's peaks differ (${first}, ${last})`);
  const m = memoryLevels(xs);
  assert.ok(m.last <= 1.2 * m.middle, `levels ${m.middle} and ${m.last}`);
});

test('a heap raised once early in the run (a burst the collector keeps) and flat after passes', () => {
  // 78 MB for the first 20 s, then 114 MB: the api in CI around the soak's pause.
  const xs = Array.from({ length: 72 }, (_, t) => (t < 20 ? 78 : t < 30 ? 78 + 3.6 * (t - 20) : 114));
  const m = memoryLevels(xs);
  assert.ok(m.last > 1.2 * m.first, 'the step is there');
  assert.ok(m.last <= 1.2 * m.middle, `levels ${m.middle} and ${m.last}`);
});

test('a leak that doubles the level over the run fails, under the same collector; one of a fifth passes unseen', () => {
  const base = sawtooth(72, 116, [3, 4, 5], 3);
  const leaking = (share: number): number[] => base.map((x, t) => x + (t / 72) * share * 116);
  const m = memoryLevels(leaking(1));
  assert.ok(m.last > 1.2 * m.middle, `levels ${m.middle} and ${m.last}`);
  // What a scaled soak cannot see: a slow leak needs the full run (or longer).
  const slow = memoryLevels(leaking(0.2));
  assert.ok(slow.last <= 1.2 * slow.middle, `levels ${slow.middle} and ${slow.last}`);
});

test('a series too short to have thirds is refused, not passed', () => {
  assert.throws(() => memoryLevels([1, 2]), /no thirds/);
});
