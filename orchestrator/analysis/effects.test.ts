import { test } from 'node:test';
import assert from 'node:assert/strict';
import { twoFactorEffects } from './effects.js';

// A 2×2 design, two runs per cell (retries off/on × shedding off/on), y = goodput (req/s):
//
//                   shed off   shed on
//   retries off     10, 12     14, 16      cell means 11, 15
//   retries on      20, 22     40, 42      cell means 21, 41
//
// By hand (effect = mean at the high level − mean at the low level):
//   retries:  (21 + 41)/2 − (11 + 15)/2 = 31 − 13 = 18
//   shed:     (15 + 41)/2 − (11 + 21)/2 = 28 − 16 = 12
//   retries × shed: ((41 − 15) − (21 − 11)) / 2 = (26 − 10) / 2 = 8
// Residuals: every run is its cell's mean ± 1, so SSR = 8 over n − 4 = 4 degrees of
// freedom: σ² = 2. With ±1 coding, Var(β) = σ²/n = 2/8, SE(β) = 0.5, and an effect is 2β:
// SE = 1. The 95% CI is the effect ± t(0.975, 4) × 1 = ± 2.7764451.
const cells: [string, string, number[]][] = [
  ['off', 'off', [10, 12]],
  ['off', 'on', [14, 16]],
  ['on', 'off', [20, 22]],
  ['on', 'on', [40, 42]],
];
const obs = cells.flatMap(([a, b, ys]) => ys.map((y) => ({ a, b, y })));

test('the effects of a 2×2 design with two runs per cell are the hand-computed ones', () => {
  const r = twoFactorEffects(['retries', 'shed'], obs);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  const { fit } = r;
  assert.equal(fit.n, 8);
  assert.equal(fit.dfResid, 4);
  assert.ok(Math.abs(fit.intercept - 22) < 1e-9); // (11 + 15 + 21 + 41) / 4
  assert.ok(Math.abs(fit.residualSd - Math.SQRT2) < 1e-9);
  assert.deepEqual(fit.coding, [
    { factor: 'retries', low: 'off', high: 'on' },
    { factor: 'shed', low: 'off', high: 'on' },
  ]);
  const want = [
    ['retries', 'main', 18],
    ['shed', 'main', 12],
    ['retries × shed', 'interaction', 8],
  ] as const;
  fit.effects.forEach((e, i) => {
    const [term, kind, estimate] = want[i]!;
    assert.equal(e.term, term);
    assert.equal(e.kind, kind);
    assert.ok(Math.abs(e.estimate - estimate) < 1e-9, `${term}: ${e.estimate}`);
    assert.ok(Math.abs(e.se - 1) < 1e-9, `${term} SE: ${e.se}`);
    assert.ok(Math.abs(e.ci95[0] - (estimate - 2.7764451)) < 1e-6, `${term} CI low: ${e.ci95[0]}`);
    assert.ok(Math.abs(e.ci95[1] - (estimate + 2.7764451)) < 1e-6, `${term} CI high: ${e.ci95[1]}`);
  });
});

test('numeric levels are coded from their lowest (−1) to their highest (+1), whatever order they come in', () => {
  // The same design with the levels written as numbers, high level first.
  const renamed = obs.map((o) => ({
    a: o.a === 'on' ? 4 : 1,
    b: o.b === 'on' ? '90% capacity' : '50% capacity',
    y: o.y,
  }));
  const r = twoFactorEffects(['maxAttempts', 'load.rate'], [...renamed].reverse());
  assert.ok(r.ok);
  assert.deepEqual(
    r.fit.effects.map((e) => Math.round(e.estimate * 1e9) / 1e9),
    [18, 12, 8],
  );
  assert.deepEqual(r.fit.coding[1], { factor: 'load.rate', low: '50% capacity', high: '90% capacity' });
});

test('no effects without residual degrees of freedom, or with a factor the model cannot code', () => {
  const once = cells.map(([a, b, ys]) => ({ a, b, y: ys[0]! }));
  const r = twoFactorEffects(['retries', 'shed'], once);
  assert.equal(r.ok, false);
  assert.match(r.ok ? '' : r.reason, /4 runs.*at least 5/);
  const three = [...obs, { a: 'maybe', b: 'off', y: 1 }];
  const q = twoFactorEffects(['retries', 'shed'], three);
  assert.equal(q.ok, false);
  assert.match(q.ok ? '' : q.reason, /retries has 3 levels that are not numbers/);
  const one = obs.map((o) => ({ ...o, b: 'off' }));
  assert.match(
    (twoFactorEffects(['retries', 'shed'], one) as { reason: string }).reason,
    /shed takes only one level/,
  );
});

test('a term that is exactly zero reads as 0, not as floating-point noise', () => {
  // The same response at every combination but for run-to-run noise: every effect 0.
  const flat = cells.flatMap(([a, b]) => [277, 279].map((y) => ({ a, b, y })));
  const r = twoFactorEffects(['retries', 'shed'], flat);
  assert.ok(r.ok);
  assert.deepEqual(
    r.fit.effects.map((e) => e.estimate),
    [0, 0, 0],
  );
});
