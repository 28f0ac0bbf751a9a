import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../foundation/clock.js';
import { flatArrivals } from '../test/helpers/arrivals.js';
import { seededRng } from '../foundation/rng.js';
import { drive } from './driver.js';
import type { AttemptResult } from './outcome.js';
import { SETTLED, type Dispatch } from './policy/dispatch.js';
import { Recorder } from './record/Recorder.js';

interface Sent {
  readonly intendedMs: number;
  readonly sentMs: number;
}

/** Drives Poisson arrivals at `ratePerS` for `seconds` against a sink that answers at once; returns every send. */
async function sends(ratePerS: number, seconds: number, sendTickMs: number | undefined): Promise<Sent[]> {
  const clock = new VirtualClock();
  const out: Sent[] = [];
  const dispatch: Dispatch = (a, h) => {
    const now = clock.now();
    out.push({ intendedMs: a.origin.intendedMs, sentMs: now });
    const r: AttemptResult = { kind: 'ok', status: 200, sentMs: now, endMs: now, attempt: a.number };
    h.onResponse(r);
    return SETTLED;
  };
  const done = drive({
    clock,
    arrivals: flatArrivals('poisson', ratePerS, 0, seconds * 1000, seededRng(7, 'arrivals')),
    dispatch,
    recorder: new Recorder({}),
    deadlineMs: Infinity,
    drainMs: 1000,
    ...(sendTickMs === undefined ? {} : { sendTickMs }),
  });
  await clock.runUntilIdle();
  await done;
  return out;
}

function meanAndCv(xs: readonly number[]): { mean: number; cv: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, cv: Math.sqrt(variance) / mean };
}

const TICK = 0.5;
const RATE = 5000;

test('batched sends: none before its intended time, each within the tick of its intended time', async () => {
  const s = await sends(RATE, 10, TICK);
  assert.equal(s.length > 45_000, true, `${s.length} sends`);
  let worst = 0;
  for (const x of s) {
    assert.ok(x.sentMs >= x.intendedMs, `sent at ${x.sentMs}, intended ${x.intendedMs}`);
    worst = Math.max(worst, x.sentMs - x.intendedMs);
  }
  assert.ok(worst < TICK, `worst lag ${worst} ms`);
  // Batching happened: many arrivals shared their send instant with another.
  assert.ok(worst > TICK / 2, `worst lag ${worst} ms: the tick was never used`);
});

test('batched sends: the driver wakes at most once per tick', async () => {
  const s = await sends(RATE, 10, TICK);
  const instants = [...new Set(s.map((x) => x.sentMs))].sort((a, b) => a - b);
  for (let i = 1; i < instants.length; i++)
    assert.ok(
      instants[i]! - instants[i - 1]! >= TICK - 1e-9,
      `wake-ups ${instants[i - 1]} and ${instants[i]}`,
    );
  // At 5 000/s and a 0.5 ms tick, about 2 000 × (1 − e^−2.5) ≈ 1 836 wake-ups a second, not 5 000.
  assert.ok(instants.length < 0.45 * s.length, `${instants.length} wake-ups for ${s.length} sends`);
  // Without a tick, one per arrival.
  const exact = await sends(RATE, 2, undefined);
  assert.equal(new Set(exact.map((x) => x.sentMs)).size, exact.length);
  for (const x of exact) assert.equal(x.sentMs, x.intendedMs);
});

test('batched sends: the schedule is unchanged, and Poisson gaps keep their mean and coefficient of variation', async () => {
  const batched = await sends(RATE, 10, TICK);
  const exact = await sends(RATE, 10, undefined);
  // The same origins at the same intended times: batching moves sends, never the schedule.
  assert.deepEqual(
    batched.map((x) => x.intendedMs),
    exact.map((x) => x.intendedMs),
  );
  const gaps = (xs: readonly number[]): number[] => xs.slice(1).map((x, i) => x - xs[i]!);
  const intended = meanAndCv(gaps(batched.map((x) => x.intendedMs)));
  assert.ok(Math.abs(intended.mean - 1000 / RATE) / (1000 / RATE) < 0.02, `mean gap ${intended.mean} ms`);
  assert.ok(Math.abs(intended.cv - 1) < 0.03, `CV ${intended.cv}`);
  // The sends themselves: their mean gap is the schedule's, and above the tick's scale
  // they are still a Poisson process (counts per 10 ms: variance/mean ≈ 1).
  const sent = batched.map((x) => x.sentMs);
  const sentGap = (sent.at(-1)! - sent[0]!) / (sent.length - 1);
  assert.ok(Math.abs(sentGap - intended.mean) / intended.mean < 0.001, `mean send gap ${sentGap} ms`);
  const counts = new Array<number>(1000).fill(0);
  for (const t of sent) if (t < 10_000) counts[Math.floor(t / 10)]!++;
  const m = counts.reduce((a, b) => a + b, 0) / counts.length;
  const v = counts.reduce((a, b) => a + (b - m) ** 2, 0) / (counts.length - 1);
  assert.ok(Math.abs(m - RATE / 100) < 1.5, `mean per 10 ms ${m}`);
  assert.ok(Math.abs(v / m - 1) < 0.15, `index of dispersion ${v / m}`);
});
