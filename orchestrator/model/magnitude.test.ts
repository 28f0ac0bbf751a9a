import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { REPO } from '../../test/helpers/cli.js';
import { BenchError } from '../../foundation/errors.js';
import { parseSet } from '../../foundation/overrides.js';
import type { FluidSystem } from './fluid.js';
import { healthyState } from './fluid.js';
import { backlogAtEnd, boundaryAt, magnitudeModel, predictCell, predictedAt } from './magnitude.js';
import { magnitudeAxis } from './magnitudeAxis.js';
import { simulatedMap } from './map.js';

// retry-storm's api and client: 8 workers × 20 ms exponential (cμ = 400/s), τ 500 ms, m = 4;
// bistable for 100 ≤ λ < 387 origins/s.
const STORM: FluidSystem = {
  workers: 8,
  work: { dist: 'exponential', meanMs: 20 },
  timeoutMs: 500,
  attempts: 4,
};
const FIXTURE = join(REPO, 'test/fixtures/experiments/storm-slowdown.yaml');

test('the backlog at the trigger’s end: Λ_h − cμ′ until the wait reaches τ, then m·λ − cμ′', () => {
  const h = healthyState(STORM, 280)!.attemptsPerS;
  // A 3x slowdown (cμ′ = 400/3) for 5 s at 280/s: phase 1 to a backlog of cμ′·τ, then the collapsed input.
  const c1 = 400 / 3;
  const t1 = (c1 * 0.5) / (h - c1);
  const expected = c1 * 0.5 + (4 * 280 - c1) * (5 - t1);
  assert.ok(Math.abs(backlogAtEnd(STORM, 280, { kind: 'slowdown', factor: 3 }, 5) / expected - 1) < 1e-9);
  // Shorter than phase 1: the first attempts alone.
  assert.ok(Math.abs(backlogAtEnd(STORM, 280, { kind: 'slowdown', factor: 3 }, 0.2) - (h - c1) * 0.2) < 1e-9);
  // A pool of 6 (300/s) keeps up with 280/s: no backlog.
  assert.equal(backlogAtEnd(STORM, 280, { kind: 'workers', to: 6 }, 100), 0);
  // A load spike keeps cμ and multiplies the input.
  assert.ok(
    Math.abs(backlogAtEnd(STORM, 280, { kind: 'load-spike', factor: 2 }, 0.1) - (2 * h - 400) * 0.1) < 1e-9,
  );
});

test('the predicted boundary over magnitude: the least factor (the largest pool) that leaves backlog ≥ cμ·τ', () => {
  // A load spike ×f tips when (f·Λ_h − cμ)·D ≥ cμ·τ: f* = (cμ + cμ·τ/D)/Λ_h.
  const h = healthyState(STORM, 280)!.attemptsPerS;
  const spike = boundaryAt(STORM, 280, 'load-spike', 5)!;
  assert.equal(spike.region, 'bistable');
  assert.ok(Math.abs(spike.value! - (400 + 400 * 0.1) / h) < 0.002, `${spike.value}`);
  // Slowdown: the boundary tips, 1% under it does not; it falls as the load rises.
  let previous = Infinity;
  for (const load of [150, 200, 280, 350]) {
    const b = boundaryAt(STORM, load, 'slowdown', 5)!.value!;
    assert.equal(predictCell(STORM, load, { kind: 'slowdown', factor: b }, 5).verdict, 'metastable');
    assert.equal(predictCell(STORM, load, { kind: 'slowdown', factor: b * 0.99 }, 5).verdict, 'recovered');
    assert.ok(b < previous, `${load}/s: ${b} below ${previous}`);
    previous = b;
  }
  // A longer trigger needs a smaller slowdown.
  assert.ok(boundaryAt(STORM, 280, 'slowdown', 20)!.value! < boundaryAt(STORM, 280, 'slowdown', 5)!.value!);
  // Workers: at 280/s a pool of 6 (300/s) keeps up, 5 (250/s) tips within 5 s; at 200/s, 3 (150/s).
  assert.deepEqual(boundaryAt(STORM, 280, 'workers', 5), { value: 5, region: 'bistable' });
  assert.deepEqual(boundaryAt(STORM, 200, 'workers', 5), { value: 3, region: 'bistable' });
  // Outside the bistable range the region decides, whatever the magnitude.
  assert.deepEqual(boundaryAt(STORM, 80, 'slowdown', 5), { value: null, region: 'stable' });
  assert.equal(predictCell(STORM, 80, { kind: 'slowdown', factor: 100 }, 5).verdict, 'recovered');
  assert.deepEqual(boundaryAt(STORM, 390, 'slowdown', 5), { value: null, region: 'unstable' });
  // Loss is not predicted (and says why), nor are replicas.
  assert.equal(boundaryAt(STORM, 280, 'loss', 5), null);
  const loss = magnitudeModel(STORM, 1, 'loss', 'probability', [280], [0.05], 5);
  assert.match(loss.notPredicted!, /does not predict loss/);
  assert.equal(predictedAt(loss)(280, 0.05), null);
  assert.match(magnitudeModel(STORM, 2, 'slowdown', 'factor', [280], [3], 5).notPredicted!, /replicas/);
});

test('the magnitude axis: the trigger kind’s field, each value checked by the kind; refusals name the flag and the kind', () => {
  const axis = magnitudeAxis(FIXTURE, [], ['1.2x', '3x']);
  assert.equal(axis.kind, 'slowdown');
  assert.equal(axis.name, 'slowdown factor');
  assert.deepEqual(
    axis.values.map((v) => v.value),
    [1.2, 3],
  );
  const refused = (f: () => unknown, re: RegExp): void =>
    assert.throws(f, (e: unknown) => e instanceof BenchError && e.code === 'E_USAGE' && re.test(e.message));
  refused(() => magnitudeAxis(FIXTURE, [], ['0.5x']), /"0\.5x" is not a slowdown factor: must be above 1x/);
  refused(() => magnitudeAxis(FIXTURE, [], ['fast']), /"fast" is not a slowdown factor/);
  refused(() => magnitudeAxis(FIXTURE, [], ['2x', '2x']), /given twice/);
  refused(
    () => magnitudeAxis(join(REPO, 'experiments/retry-storm.yaml'), [], ['2x']),
    /trigger is a pause, which has no magnitude to vary \(the kinds with one: slowdown \(factor\), workers \(to\)/,
  );
});

test('the boundary against the simulated cells (seeded): storm-slowdown at half scale (a 5 s slowdown), cells either side', async (t) => {
  const axis = magnitudeAxis(FIXTURE, [], ['1.3x', '1.7x', '2x', '2.5x']);
  const map = await simulatedMap(FIXTURE, {
    rates: [200, 280],
    durationsMs: [10_000],
    scale: 0.5,
    magnitudes: axis,
    overrides: [],
  });
  const model = magnitudeModel(STORM, 1, 'slowdown', 'factor', [200, 280], [1.3, 1.7, 2, 2.5], 5);
  const at = predictedAt(model);
  const verdict = (load: number, k: number): string =>
    map.rows.find((r) => r.factors['offered load'] === load && r.factors['slowdown factor'] === k)!.verdict;
  // The model's boundary: 2.21x at 200/s, 1.57x at 280/s; each cell here ≥ 8% from it.
  for (const [load, k, expected] of [
    [200, 1.3, 'recovered'],
    [200, 2, 'recovered'],
    [200, 2.5, 'metastable'],
    [280, 1.3, 'recovered'],
    [280, 1.7, 'metastable'],
    [280, 2.5, 'metastable'],
  ] as const) {
    t.diagnostic(`${load}/s × ${k}x: simulated ${verdict(load, k)}, model ${at(load, k)}`);
    assert.equal(at(load, k), expected, `model at ${load}/s × ${k}x`);
    assert.equal(verdict(load, k), expected, `simulation at ${load}/s × ${k}x`);
  }
});

test('where the boundary errs (docs/queueing-model.md): one grid step either side, in simulation (seeded)', async () => {
  // The model's slowdown boundary for a 5 s trigger, as the docs give it (to the hundredth).
  for (const [load, doc] of [
    [150, 2.95],
    [200, 2.21],
    [280, 1.57],
    [350, 1.26],
  ] as const) {
    const b = boundaryAt(STORM, load, 'slowdown', 5)!.value!;
    assert.ok(Math.abs(b - doc) < 0.01, `${load}/s: ${b}`);
  }
  const cell = async (set: string[], load: number, written: string): Promise<string> => {
    const overrides = set.map((s) => {
      const r = parseSet(s);
      assert.ok(r.ok);
      return r.value;
    });
    const axis = magnitudeAxis(FIXTURE, overrides, [written]);
    const map = await simulatedMap(FIXTURE, {
      rates: [load],
      durationsMs: [10_000],
      scale: 0.5,
      magnitudes: axis,
      overrides,
    });
    return map.rows[0]!.verdict;
  };
  // Slowdown: at 200/s 2.2x collapses (the model: 2.21x), at 280/s 1.6x recovers (the model: 1.58x).
  assert.equal(predictCell(STORM, 200, { kind: 'slowdown', factor: 2.2 }, 5).verdict, 'recovered');
  assert.equal(await cell([], 200, '2.2x'), 'metastable');
  assert.equal(predictCell(STORM, 280, { kind: 'slowdown', factor: 1.6 }, 5).verdict, 'metastable');
  assert.equal(await cell([], 280, '1.6x'), 'recovered');
  // A pool of 5 for 5 s at 280/s: the model tips, the simulation recovers (and tips at 4).
  const workers = ['schedule.trigger={kind: workers, to: 4, duration: 10s}'];
  assert.equal(await cell(workers, 280, '5'), 'recovered');
  assert.equal(await cell(workers, 280, '4'), 'metastable');
  // A load spike at 280/s: the model tips from 1.572x, the simulation between 1.6x and 1.8x.
  assert.ok(Math.abs(boundaryAt(STORM, 280, 'load-spike', 5)!.value! - 1.572) < 0.001);
  const spike = ['schedule.trigger={kind: load-spike, factor: 2x, duration: 10s}'];
  assert.equal(await cell(spike, 280, '1.6x'), 'recovered');
  assert.equal(await cell(spike, 280, '1.8x'), 'metastable');
});
