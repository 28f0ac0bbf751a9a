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
  assert.ok(m.last <= 1.2 * m.first, `levels ${m.first} and ${m.last}`);
});

test("a leak of 45% of the level over the run (30% between the thirds' middles) fails, under the same collector", () => {
  const base = sawtooth(72, 116, [3, 4, 5], 3);
  const leaking = base.map((x, t) => x + (t / 72) * 0.45 * 116);
  const m = memoryLevels(leaking);
  assert.ok(m.last > 1.2 * m.first, `levels ${m.first} and ${m.last}`);
});

test('a series too short to have thirds is refused, not passed', () => {
  assert.throws(() => memoryLevels([1, 2]), /no thirds/);
});
