import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import type { ArrivalProcess } from './ArrivalProcess.js';
import { onOffArrivals } from './onOff.js';
import { RateProfile } from './profile.js';
import { profiledArrivals } from './profiled.js';
import { replayArrivals } from './replay.js';
import { wavesArrivals } from './waves.js';

function drain(a: ArrivalProcess): number[] {
  const out: number[] = [];
  for (let t = a.next(); t !== undefined; t = a.next()) out.push(t);
  return out;
}

function countIn(ts: readonly number[], a: number, b: number): number {
  return ts.filter((t) => t >= a && t < b).length;
}

/** ramp 0→200/s over 10 s, sustain 200/s for 20 s, burst 800/s for 5 s, recover 100/s for 15 s */
const phases = new RateProfile([
  { durationMs: 10_000, fromPerS: 0, toPerS: 200 },
  { durationMs: 20_000, fromPerS: 200, toPerS: 200 },
  { durationMs: 5_000, fromPerS: 800, toPerS: 800 },
  { durationMs: 15_000, fromPerS: 100, toPerS: 100 },
]);

test('a rate profile integrates its segments and inverts exactly', () => {
  assert.equal(phases.total, 1000 + 4000 + 4000 + 1500);
  assert.equal(phases.cumulative(10_000), 1000);
  assert.equal(phases.cumulative(5_000), 250); // half-way up the ramp: (0 + 100)/2 · 5 s
  assert.equal(phases.rate(5_000), 100);
  for (const n of [0, 1, 250, 999.5, 1000, 4321, 9000, 10_499]) {
    const t = phases.inverse(n)!;
    assert.ok(Math.abs(phases.cumulative(t) - n) < 1e-6, `Λ(Λ⁻¹(${n})) = ${phases.cumulative(t)}`);
  }
  assert.equal(phases.inverse(phases.total), undefined);
});

test('constant arrivals over phases offer exactly the declared request count in each phase', () => {
  const ts = drain(profiledArrivals(phases, 'constant', seededRng(1)));
  assert.equal(ts.length, 10_500);
  assert.equal(countIn(ts, 0, 10_000), 1000);
  assert.equal(countIn(ts, 10_000, 30_000), 4000);
  assert.equal(countIn(ts, 30_000, 35_000), 4000);
  assert.equal(countIn(ts, 35_000, 50_000), 1500);
  // The ramp's density grows linearly: the second half of it holds three quarters.
  assert.equal(countIn(ts, 5_000, 10_000), 750);
});

test('poisson arrivals over phases integrate to the declared counts within sampling error', () => {
  const ts = drain(profiledArrivals(phases, 'poisson', seededRng(42, 'arrivals')));
  const within = (got: number, mean: number) => Math.abs(got - mean) <= 4 * Math.sqrt(mean);
  assert.ok(within(ts.length, 10_500), `total ${ts.length}`);
  assert.ok(within(countIn(ts, 30_000, 35_000), 4000), `burst ${countIn(ts, 30_000, 35_000)}`);
  assert.ok(within(countIn(ts, 0, 10_000), 1000), `ramp ${countIn(ts, 0, 10_000)}`);
  // Inside the sustain phase the gaps are exponential: CV near 1.
  const sustain = ts.filter((t) => t >= 10_000 && t < 30_000);
  const gaps = sustain.slice(1).map((t, i) => t - sustain[i]!);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  const cv = Math.sqrt(gaps.reduce((a, g) => a + (g - mean) ** 2, 0) / gaps.length) / mean;
  assert.ok(Math.abs(mean - 5) < 0.3 && Math.abs(cv - 1) < 0.06, `mean ${mean} cv ${cv}`);
});

test('a load spike scales the rate by k over its span only', () => {
  const flat = new RateProfile([{ durationMs: 60_000, fromPerS: 100, toPerS: 100 }]);
  const spiked = flat.scaled(20_000, 30_000, 4);
  assert.equal(spiked.total, 6000 + 3000);
  assert.equal(spiked.rate(25_000), 400);
  assert.equal(spiked.rate(35_000), 100);
  const ts = drain(profiledArrivals(spiked, 'constant', seededRng(1)));
  assert.equal(countIn(ts, 20_000, 30_000), 4000);
});

test('step tests are profiles too: each step offers its rate × duration', () => {
  const steps = new RateProfile(
    [100, 200, 300, 400].map((r) => ({ durationMs: 10_000, fromPerS: r, toPerS: r })),
  );
  const ts = drain(profiledArrivals(steps, 'constant', seededRng(1)));
  assert.deepEqual(
    [0, 1, 2, 3].map((i) => countIn(ts, i * 10_000, (i + 1) * 10_000)),
    [1000, 2000, 3000, 4000],
  );
});

test('waves follow the sinusoid: more arrivals in the crest half-period than in the trough', () => {
  const ts = drain(
    wavesArrivals(
      { meanPerS: 200, amplitudePerS: 150, periodMs: 20_000, startMs: 0, endMs: 200_000 },
      seededRng(7),
    ),
  );
  assert.ok(Math.abs(ts.length - 40_000) <= 4 * Math.sqrt(40_000), `total ${ts.length}`);
  let crest = 0;
  let trough = 0;
  for (const t of ts) {
    if (t % 20_000 < 10_000) crest++;
    else trough++;
  }
  // Expected: 10 periods × (200·10 ± 150·20/π) = 20 000 ± 9 549.
  assert.ok(
    Math.abs(crest - 29_549) < 600 && Math.abs(trough - 10_451) < 600,
    `crest ${crest}, trough ${trough}`,
  );
  assert.throws(
    () =>
      wavesArrivals(
        { meanPerS: 10, amplitudePerS: 20, periodMs: 1000, startMs: 0, endMs: 1000 },
        seededRng(1),
      ),
    RangeError,
  );
});

test('on/off arrivals keep the mean rate but are overdispersed (variance of counts > mean)', () => {
  const o = { onMs: 2000, offMs: 8000, onPerS: 500, offPerS: 0, startMs: 0, endMs: 2_000_000 };
  const ts = drain(onOffArrivals(o, seededRng(3)));
  const meanRate = (ts.length / 2_000_000) * 1000;
  assert.ok(Math.abs(meanRate - 100) < 8, `mean rate ${meanRate}`);
  const counts = new Array<number>(2000).fill(0);
  for (const t of ts) counts[Math.floor(t / 1000)]!++;
  const m = counts.reduce((a, b) => a + b, 0) / counts.length;
  const v = counts.reduce((a, c) => a + (c - m) ** 2, 0) / (counts.length - 1);
  assert.ok(v / m > 10, `index of dispersion ${v / m} (Poisson: 1)`);
  // A plain Poisson stream at the same mean is not.
  const flat = drain(
    profiledArrivals(
      new RateProfile([{ durationMs: 2_000_000, fromPerS: 100, toPerS: 100 }]),
      'poisson',
      seededRng(3),
    ),
  );
  const fc = new Array<number>(2000).fill(0);
  for (const t of flat) fc[Math.floor(t / 1000)]!++;
  const fm = fc.reduce((a, b) => a + b, 0) / fc.length;
  const fv = fc.reduce((a, c) => a + (c - fm) ** 2, 0) / (fc.length - 1);
  assert.ok(Math.abs(fv / fm - 1) < 0.15, `poisson dispersion ${fv / fm}`);
});

test('replay sends recorded arrivals in order and drops those past the end', () => {
  const ts = drain(replayArrivals([300, 100, 200, 5000], 1000));
  assert.deepEqual(ts, [100, 200, 300]);
  assert.equal(replayArrivals([100, 200, 1500]).rate(150), 2);
});
