import { test } from 'node:test';
import assert from 'node:assert/strict';
import { round } from './round.js';

test('round keeps the given decimals, halves up, exactly as Math.round(x · 10^d) / 10^d', () => {
  assert.equal(round(1.23456, 3), 1.235);
  assert.equal(round(2.5, 0), 3);
  assert.equal(round(-2.5, 0), -2);
  assert.equal(round(0.1234567, 6), 0.123457);
  for (const x of [0, 1 / 3, 2 / 3, 1234.5678, -0.0005, 1e-7, 0.07 * 3]) {
    assert.equal(round(x, 3), Math.round(x * 1000) / 1000);
    assert.equal(round(x, 4), Math.round(x * 10000) / 10000);
    assert.equal(round(x, 6), Math.round(x * 1e6) / 1e6);
  }
});
