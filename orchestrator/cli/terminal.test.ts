import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mapProgressLine, plainLines } from './terminal.js';

test('plainLines: no markdown reaches the terminal (emphasis, code, tables become aligned columns)', () => {
  const out = plainLines([
    'offered load λ: 280 origins/s: inside the bistable range: **vulnerable**, see `model.md`',
    '| trigger (s) \\ load (origins/s) | 200 | 360 (unstable) |',
    '|---|---|---|',
    '| 2 | **M** | R |',
  ]);
  assert.deepEqual(out, [
    'offered load λ: 280 origins/s: inside the bistable range: vulnerable, see model.md',
    'trigger (s) \\ load (origins/s)  200  360 (unstable)',
    '------------------------------  ---  --------------',
    '2                               M    R',
  ]);
  for (const l of out) assert.doesNotMatch(l, /\*\*|\||`/);
});

test("model's progress line names each number: the recovery time after the trigger, or the goodput after it, and the wall time", () => {
  const row = (verdict: 'metastable' | 'recovered', recovery: number | null) => ({
    factors: { 'offered load': 200, 'trigger duration': 2 },
    figures: {
      'goodput after': verdict === 'recovered' ? 199.5 : 0,
      'amplification after': 1,
      'recovery time': recovery,
    },
    verdict,
  });
  assert.equal(
    mapProgressLine(1, 4, row('recovered', 3), 251),
    '  point 1/4: offered load 200/s, trigger 2 s → recovered 3 s after the trigger (simulated in 0.3 s of wall time)',
  );
  assert.equal(
    mapProgressLine(2, 4, row('metastable', null), 3210),
    '  point 2/4: offered load 200/s, trigger 2 s → metastable, goodput after the trigger 0/s (simulated in 3.2 s of wall time)',
  );
});
