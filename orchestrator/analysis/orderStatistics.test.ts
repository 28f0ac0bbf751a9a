import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../foundation/rng.js';
import { OrderStatistics } from './orderStatistics.js';

/** Each k asked for, in any order, gives what sort() puts at k: ties, −0 and +0 included. */
test('OrderStatistics.at(k) is sort()[k] for every k, in any order', () => {
  const r = seededRng(11);
  const rng = (): number => r.next();
  const makers: (() => number)[] = [
    () => rng() * 100 - 50,
    () => Math.floor(rng() * 4) - 2,
    () => (rng() < 0.5 ? -0 : rng() < 0.5 ? 0 : -1),
    () => 3,
    () => (rng() < 0.01 ? Infinity : rng() < 0.01 ? -Infinity : rng()),
  ];
  for (const make of makers)
    for (const n of [1, 2, 3, 10, 101, 1000]) {
      const values = Float64Array.from({ length: n }, () => make());
      const sorted = values.slice().sort();
      const order = new OrderStatistics(values.slice());
      const ks = Array.from({ length: n }, (_, k) => k).sort(() => rng() - 0.5);
      for (const k of ks) assert.ok(Object.is(order.at(k), sorted[k]), `n ${n}, k ${k}`);
    }
});

test('OrderStatistics on sorted, reversed and all-equal input stays exact', () => {
  for (const values of [
    Float64Array.from({ length: 5000 }, (_, i) => i),
    Float64Array.from({ length: 5000 }, (_, i) => -i),
    new Float64Array(5000).fill(-0),
  ]) {
    const sorted = values.slice().sort();
    const order = new OrderStatistics(values);
    for (const k of [2500, 2499, 0, 4999, 1234, 3777]) assert.ok(Object.is(order.at(k), sorted[k]));
  }
});
