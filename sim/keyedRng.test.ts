import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleDuration } from '../foundation/distributions.js';
import { SimApi, type SimRequest } from './api.js';
import { SimClock } from './clock.js';
import { attemptKey, KeyedRng } from './keyedRng.js';

test('a keyed draw depends on the seed and the key only, not on what was drawn before', () => {
  const r = new KeyedRng(42, 'api-work-keyed');
  const first = [r.at(7).next(), r.at(7).next()];
  r.at(8).next();
  r.at(9).next();
  assert.equal(r.at(7).next(), first[0]);
  assert.notEqual(first[0], r.at(8).next());
  assert.notEqual(new KeyedRng(43, 'api-work-keyed').at(7).next(), first[0]);
  // Keys above 2^32 (origin ids × 4096) are told apart too.
  assert.notEqual(r.at(attemptKey(2 ** 21, 1)).next(), r.at(attemptKey(0, 1)).next());
});

test('keyed draws over consecutive attempts are uniform: exponential work keeps its mean and variance', () => {
  // 200 000 attempts of 50 000 origins, exponential(mean 20 ms): the mean within 1%
  // (its SE is 0.22%), the SD within 2%, and P(X > 2 × mean) = e^-2 within 1% absolute.
  const r = new KeyedRng(1, 'api-work-keyed');
  const d = { dist: 'exponential', meanMs: 20 } as const;
  let n = 0;
  let sum = 0;
  let sq = 0;
  let over = 0;
  for (let o = 0; o < 50_000; o++)
    for (let a = 1; a <= 4; a++) {
      const x = sampleDuration(d, r.at(attemptKey(o, a)));
      n++;
      sum += x;
      sq += x * x;
      if (x > 40) over++;
    }
  const mean = sum / n;
  const sd = Math.sqrt(sq / n - mean * mean);
  assert.ok(Math.abs(mean / 20 - 1) < 0.01, `mean ${mean}`);
  assert.ok(Math.abs(sd / 20 - 1) < 0.02, `sd ${sd}`);
  assert.ok(Math.abs(over / n - Math.exp(-2)) < 0.01, `tail ${over / n}`);
});

/** The work each attempt got on a one-worker api, when they arrive in `order` at once. */
async function workOf(order: readonly number[], keyed: boolean): Promise<Map<number, number>> {
  const clock = new SimClock();
  const api = new SimApi(clock, {
    workers: 1,
    work: { dist: 'exponential', meanMs: 20 },
    seed: 5,
    ...(keyed ? { keyedWorkSeed: 5 } : {}),
  });
  const ends: [number, number][] = [];
  for (const key of order) {
    const req: SimRequest = {
      route: '/work',
      cost: undefined,
      key: undefined,
      deadlineHeaderMs: undefined,
      drawKey: key,
      gone: false,
      answer: () => void ends.push([key, clock.now()]),
      reset: () => assert.fail('reset'),
      refuse: () => assert.fail('refused'),
      connectTimedOut: () => assert.fail('connect timed out'),
      queued: undefined,
    };
    clock.timer(0, () => api.connect(req, false));
  }
  await clock.run(new Promise<void>((resolve) => clock.timer(10_000, resolve)));
  // One worker: each attempt's work is its end less the one before it.
  return new Map(ends.map(([key, end], i) => [key, end - (ends[i - 1]?.[1] ?? 0)]));
}

test('with keyed draws an attempt gets the same work whatever order the api serves it in; in service order it would not', async () => {
  const keys = [attemptKey(0, 1), attemptKey(1, 1), attemptKey(1, 2)];
  const forward = await workOf(keys, true);
  const backward = await workOf([...keys].reverse(), true);
  // (Work is recovered as a difference of end times: equal to rounding.)
  for (const k of keys) assert.ok(Math.abs(backward.get(k)! - forward.get(k)!) < 1e-9, `attempt ${k}`);
  const shared = await workOf(keys, false);
  const sharedBack = await workOf([...keys].reverse(), false);
  // The shared stream hands its first draw to whichever request a worker takes first.
  assert.ok(Math.abs(sharedBack.get(keys[2]!)! - shared.get(keys[0]!)!) < 1e-9);
  assert.ok(Math.abs(sharedBack.get(keys[0]!)! - shared.get(keys[0]!)!) > 1e-3);
});
