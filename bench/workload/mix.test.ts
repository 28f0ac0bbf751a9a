import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { WorkloadMix, type RequestClass } from './mix.js';
import { zipfSampler } from './zipf.js';

const classes: RequestClass[] = [
  {
    name: 'read',
    share: 0.7,
    method: 'GET',
    path: '/work',
    bodyBytes: 0,
    key: { dist: 'zipf', keys: 1000, exponent: 1.1 },
  },
  {
    name: 'write',
    share: 0.2,
    method: 'POST',
    path: '/work',
    bodyBytes: 512,
    key: { dist: 'uniform', keys: 50 },
  },
  { name: 'heavy', share: 0.1, method: 'GET', path: '/work', bodyBytes: 0, cost: 'heavy' },
];

test('every class gets its share of n origins to within one, at every n', () => {
  const mix = new WorkloadMix(classes, (i) => seededRng(1, `key-${i}`));
  const counts = [0, 0, 0];
  for (let n = 1; n <= 10_000; n++) {
    counts[mix.next().cls]!++;
    for (let i = 0; i < 3; i++)
      assert.ok(Math.abs(counts[i]! - classes[i]!.share * n) < 1 + 1e-9, `n=${n} class ${i}: ${counts[i]}`);
  }
  assert.deepEqual(counts, [7000, 2000, 1000]);
});

test('two mixes send the same sequence of classes whatever their key seeds', () => {
  const a = new WorkloadMix(classes, (i) => seededRng(1, `key-${i}`));
  const b = new WorkloadMix(classes, (i) => seededRng(99, `key-${i}`));
  for (let n = 0; n < 500; n++) assert.equal(a.next().cls, b.next().cls);
});

test('requests carry the class method, body, cost and key', () => {
  const mix = new WorkloadMix(classes, (i) => seededRng(1, `key-${i}`));
  const seen = new Map<number, ReturnType<WorkloadMix['next']>>();
  for (let n = 0; n < 20; n++) {
    const r = mix.next();
    seen.set(r.cls, r);
  }
  assert.match(seen.get(0)!.path, /^\/work\?key=\d+$/);
  assert.equal(seen.get(1)!.method, 'POST');
  assert.equal(seen.get(1)!.body?.length, 512);
  assert.equal(seen.get(2)!.path, '/work?cost=heavy');
  assert.equal(seen.get(2)!.key, undefined);
  assert.throws(() => new WorkloadMix([{ ...classes[0]!, share: 0.5 }], () => seededRng(1)), /sum to 100%/);
});

test('zipf keys follow P(k) ∝ 1/k^s', () => {
  for (const [n, s] of [
    [10, 1],
    [100, 0.8],
    [1000, 1.2],
  ] as const) {
    const draw = zipfSampler(n, s, seededRng(5, `zipf-${n}`));
    const N = 200_000;
    const counts = new Array<number>(n + 1).fill(0);
    for (let i = 0; i < N; i++) {
      const k = draw();
      assert.ok(k >= 1 && k <= n);
      counts[k]!++;
    }
    let norm = 0;
    for (let k = 1; k <= n; k++) norm += 1 / k ** s;
    for (const k of [1, 2, 3, 10]) {
      if (k > n) continue;
      const p = 1 / k ** s / norm;
      const sd = Math.sqrt(N * p * (1 - p));
      assert.ok(
        Math.abs(counts[k]! - N * p) < 4.5 * sd,
        `n=${n} s=${s} k=${k}: ${counts[k]} vs ${(N * p).toFixed(0)}`,
      );
    }
  }
});

test('uniform keys cover 1..keys evenly', () => {
  const mix = new WorkloadMix(
    [{ name: 'u', share: 1, method: 'GET', path: '/work', bodyBytes: 0, key: { dist: 'uniform', keys: 10 } }],
    () => seededRng(2),
  );
  const counts = new Array<number>(11).fill(0);
  for (let i = 0; i < 50_000; i++) counts[mix.next().key!]!++;
  assert.equal(counts[0], 0);
  for (let k = 1; k <= 10; k++) assert.ok(Math.abs(counts[k]! - 5000) < 300, `key ${k}: ${counts[k]}`);
});

test('a class with cancel: exactly its share of origins is cancelled, evenly spread', () => {
  const mix = new WorkloadMix(
    [
      { name: 'read', share: 0.5, method: 'GET', path: '/work', bodyBytes: 0 },
      {
        name: 'chat',
        share: 0.5,
        method: 'POST',
        path: '/chat',
        bodyBytes: 0,
        cancel: { share: 0.2, afterTokens: 7 },
      },
    ],
    (i) => seededRng(1, String(i)),
  );
  const chats: (number | undefined)[] = [];
  for (let i = 0; i < 200; i++) {
    const r = mix.next();
    if (r.cls === 1) chats.push(r.cancelAfterTokens);
    else assert.equal(r.cancelAfterTokens, undefined);
  }
  assert.equal(chats.length, 100);
  assert.equal(chats.filter((c) => c === 7).length, 20);
  // One in five: every fifth chat.
  chats.forEach((c, i) => assert.equal(c, (i + 1) % 5 === 0 ? 7 : undefined));
});
