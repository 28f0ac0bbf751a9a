import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hypothesisValue, sig3, withUnit } from './numbers.js';

test('sig3: three significant figures, thousands separated, trailing zeros kept', () => {
  const cases: [number, string][] = [
    [277.917, '278'],
    [16.847, '16.8'],
    [0.8212, '0.821'],
    [101.631, '102'],
    [1104, '1,100'],
    [4.044, '4.04'],
    [0.0012345, '0.00123'],
    [-3.14159, '-3.14'],
    [2, '2.00'],
    [1.003, '1.00'],
    [0, '0'],
    [123456, '123,000'],
  ];
  for (const [x, s] of cases) assert.equal(sig3(x), s, String(x));
});

test('every value has its unit; a hypothesis value reads as its threshold does', () => {
  assert.equal(withUnit(277.917, '/s'), '278/s');
  assert.equal(withUnit(16.847, ' ms'), '16.8 ms');
  assert.equal(withUnit(null, '/s'), 'unmeasured');
  assert.equal(hypothesisValue('goodput', 0.8212), '82.1% of offered');
  assert.equal(hypothesisValue('errorRatio', 0.00456), '0.456%');
  assert.equal(hypothesisValue('p99', 101.631), '102 ms');
  assert.equal(hypothesisValue('p99', null), '–');
});
