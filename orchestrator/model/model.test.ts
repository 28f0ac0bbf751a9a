import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/cli.js';
import { bistableRange, healthyState, timeoutProbability } from './fluid.js';
import { mmcSojournTail } from './queueing.js';
import { simulate } from './simulate.js';
import { describePrediction, predict } from './predict.js';
import { planOf, planOfFile } from '../../test/helpers/plan.js';

test('the fluid model reproduces the bistable ranges computed in research/metastability.md §10', () => {
  const ms = (x: number): { dist: 'exponential'; meanMs: number } => ({ dist: 'exponential', meanMs: x });
  const cases: [Parameters<typeof bistableRange>[0], number, number][] = [
    [{ workers: 1, work: ms(100), timeoutMs: 3000, attempts: 5 }, 2, 8.57],
    [{ workers: 1, work: ms(100), timeoutMs: 1000, attempts: 2 }, 5, 7.05],
    [{ workers: 8, work: ms(100), timeoutMs: 1000, attempts: 4 }, 20, 74.2],
    [{ workers: 8, work: ms(100), timeoutMs: 500, attempts: 4 }, 20, 68.6],
  ];
  for (const [sys, lower, upper] of cases) {
    const r = bistableRange(sys);
    assert.ok(Math.abs(r.lowerPerS - lower) < 1e-9, `${JSON.stringify(sys)}: lower ${r.lowerPerS}`);
    assert.ok(Math.abs(r.upperPerS - upper) < 0.06, `${JSON.stringify(sys)}: upper ${r.upperPerS}`);
    assert.equal(r.bistable, true);
  }
  // One attempt: nothing sustains an overload, the range is empty.
  assert.equal(bistableRange({ workers: 8, work: ms(20), timeoutMs: 500, attempts: 1 }).bistable, false);
});

test('the timeout probability is the M/M/c sojourn tail for exponential work; the healthy state is Λ = λ·(1 − p^m)/(1 − p)', () => {
  const sys = {
    workers: 8,
    work: { dist: 'exponential' as const, meanMs: 100 },
    timeoutMs: 1000,
    attempts: 4,
  };
  for (const L of [10, 40, 70, 79])
    assert.ok(
      Math.abs(timeoutProbability(sys, L) / mmcSojournTail(8, L / 1000, 1 / 100, 1000) - 1) < 1e-9,
      `Λ ${L}`,
    );
  const h = healthyState(sys, 60)!;
  const p = h.timeoutProbability;
  assert.ok(Math.abs(h.attemptsPerS - (60 * (1 - p ** 4)) / (1 - p)) < 1e-6);
  assert.equal(healthyState(sys, 75), null, 'above the upper edge (74.2) there is no healthy state');
});

/**
 * The lab of retry-storm (8 workers × 20 ms exponential: cμ = 400/s, 500 ms timeout,
 * immediate retries) with m attempts, at origin rate λ, paused for 5 s.
 */
function stormAt(rate: number, attempts: number): string {
  return `
name: storm-sweep
lab: { api: { workers: 8, work: { dist: exponential, mean: 20ms } } }
load: { arrival: poisson, rate: ${rate}/s }
client: { timeout: 500ms, retry: { policy: immediate, maxAttempts: ${attempts} } }
schedule: { warmup: 5s, baseline: 10s, trigger: { kind: pause, target: api, duration: 5s }, observe: 40s }
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 5s }
seed: 42
`;
}

test('λ sweep in simulation: a pause leaves the system collapsed inside the predicted bistable range (m·λ > cμ), and it recovers below cμ/m', async (t) => {
  const work = { dist: 'exponential' as const, meanMs: 20 };
  for (const [m, below, inside] of [
    [4, [50, 80], [150, 250, 350]],
    [2, [120, 170], [250, 350]],
  ] as const) {
    const range = bistableRange({ workers: 8, work, timeoutMs: 500, attempts: m });
    t.diagnostic(`m = ${m}: bistable for ${range.lowerPerS} ≤ λ < ${range.upperPerS.toFixed(1)} origins/s`);
    for (const rate of [...below, ...inside]) {
      const collapsedExpected = (inside as readonly number[]).includes(rate);
      assert.equal(rate >= range.lowerPerS && rate < range.upperPerS, collapsedExpected, `λ ${rate}, m ${m}`);
      const s = (await simulate(planOf(stormAt(rate, m)))).summary;
      t.diagnostic(
        `m ${m}, λ ${rate}: ${s.metastable ? 'collapsed' : 'recovered'}; goodput ${s.baseline.goodputPerS} → ${s.afterTrigger.goodputPerS}/s, amplification ${s.afterTrigger.amplification}`,
      );
      assert.ok(s.baseline.goodputPerS! > 0.95 * rate, `λ ${rate}: healthy before the trigger`);
      if (collapsedExpected) {
        assert.equal(s.metastable, true, `λ ${rate}, m ${m}: ${s.recoveryReason}`);
        assert.ok(s.afterTrigger.goodputPerS! < 0.1 * rate);
        assert.ok(s.afterTrigger.amplification! > 0.95 * m, `amplification ${s.afterTrigger.amplification}`);
      } else {
        assert.equal(s.metastable, false, `λ ${rate}, m ${m}: ${s.recoveryReason}`);
        assert.equal(s.recovered, true);
      }
    }
  }
});

test('metabench model: the fluid prediction, and a simulated map written with its figure', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'metabench-model-')), 'm');
  const r = await runCli([
    'model',
    'experiments/retry-storm.yaml',
    '--rates',
    '60/s,280/s',
    '--durations',
    '5s',
    '--scale',
    '0.5',
    '--out',
    out,
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /bistable range: 100 ≤ λ < 387\.15 origins\/s/);
  assert.match(r.stdout, /offered load λ: 280 origins\/s: inside the bistable range/);
  const model = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as {
    fluid: { region: string; range: { lowerPerS: number } };
    map: { rows: { factors: Record<string, number>; verdict: string }[] };
  };
  assert.equal(model.fluid.region, 'bistable');
  assert.deepEqual(
    model.map.rows.map((x) => [x.factors['offered load'], x.factors['trigger duration'], x.verdict]),
    [
      [60, 2.5, 'recovered'],
      [280, 2.5, 'metastable'],
    ],
  );
  for (const f of ['model.md', 'map.csv', 'figures/sweep-map.svg', 'figures/sweep-map.vl.json'])
    assert.ok(existsSync(join(out, f)), f);
  assert.match(readFileSync(join(out, 'model.md'), 'utf8'), /## Simulated map of the metastable region/);
  const noMap = await runCli([
    'model',
    'experiments/retry-storm-no-retry.yaml',
    '--no-map',
    '--out',
    `${out}-2`,
  ]);
  assert.equal(noMap.code, 0, noMap.stderr);
  assert.match(noMap.stdout, /bistable range: empty/);
  // The terminal gets plain text: the region without markdown emphasis.
  assert.match(noMap.stdout, /below cμ\/m: stable,/);
  assert.doesNotMatch(noMap.stdout, /\*\*/);
});

test('replicas: N api replicas under an even split are N copies of one api at λ/N, and the simulation of 3 replicas agrees on each side of the edge', async () => {
  const withReplicas = (rate: number, balance: string): string =>
    stormAt(rate, 4)
      .replace('workers: 8,', 'workers: 8, replicas: 3,')
      .replace('client: {', `client: { balance: ${balance},`);
  const one = predict(planOf(stormAt(280, 4)));
  const three = predict(planOf(withReplicas(840, 'round-robin')));
  assert.equal(three.replicas, 3);
  assert.equal(three.range.capacityPerS, 3 * one.range.capacityPerS);
  assert.equal(three.range.lowerPerS, 3 * one.range.lowerPerS);
  assert.ok(Math.abs(three.range.upperPerS - 3 * one.range.upperPerS) < 1e-9 * three.range.upperPerS);
  assert.equal(three.region, one.region);
  assert.ok(Math.abs(three.healthy!.attemptsPerS - 3 * one.healthy!.attemptsPerS) < 1e-6);
  assert.ok(describePrediction(three).some((l) => /api replicas N \| 3/.test(l)));
  assert.ok(!three.caveats.some((c) => /herd/.test(c)));
  assert.ok(predict(planOf(withReplicas(840, 'least-latency'))).caveats.some((c) => /herd/.test(c)));
  // Simulated: 3 × 8 workers of 20 ms, m = 4: the lower edge is 3 × 100 = 300/s.
  for (const [rate, collapses] of [
    [240, false],
    [840, true],
  ] as const) {
    const s = (await simulate(planOf(withReplicas(rate, 'round-robin')))).summary;
    assert.equal(s.metastable, collapses, `λ ${rate}/s over 3 replicas: ${s.recoveryReason}`);
  }
});

test('the JVM rows: the fluid model says it leaves garbage collection out, and so sees no way for their collapse to last', () => {
  const p = predict(planOfFile('jvm-gc-spike'));
  assert.ok(
    p.caveats.some((c) => /garbage collection .* cannot predict a collapse sustained by GC time/.test(c)),
    JSON.stringify(p.caveats),
  );
  assert.equal(p.range.bistable, false);
  assert.ok(!predict(planOfFile('retry-storm')).caveats.some((c) => /garbage collection/.test(c)));
});
