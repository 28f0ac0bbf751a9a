import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareByLevels, numericLevels, sortedLevels } from './levels.js';

test('factor values written with units read as numbers in one unit', () => {
  const rate = numericLevels(['70% capacity', '20% capacity', '90% capacity'])!;
  assert.equal(rate.unit, '% capacity');
  assert.deepEqual(['70% capacity', '20% capacity'].map(rate.value), [70, 20]);
  assert.equal(numericLevels(['100/s', '600/m'])!.value('600/m'), 10);
  assert.equal(numericLevels(['500ms', '2s'])!.unit, 'ms');
  assert.equal(numericLevels(['500ms', '2s'])!.value('2s'), 2000);
  const s = numericLevels(['10s', '2s'])!;
  assert.deepEqual([s.unit, s.value('10s')], ['s', 10]);
  assert.deepEqual([numericLevels([1, 4, 2])!.unit, numericLevels([1, 4, 2])!.value(4)], [null, 4]);
  // Not one kind of number: no numeric axis.
  assert.equal(numericLevels(['100/s', '50% capacity']), null);
  assert.equal(numericLevels(['false', 'true']), null);
  assert.equal(numericLevels([1, 'fifo']), null);
});

test('levels sort numerically when they read as numbers, else keep the order they were written in', () => {
  assert.deepEqual(sortedLevels(['70% capacity', '20% capacity', '90% capacity', '20% capacity']), [
    '20% capacity',
    '70% capacity',
    '90% capacity',
  ]);
  assert.deepEqual(sortedLevels(['2s', '500ms', '10s']), ['500ms', '2s', '10s']);
  assert.deepEqual(sortedLevels(['lifo', 'fifo']), ['lifo', 'fifo']);
  const rows = [
    { a: '70% capacity', b: 4 },
    { a: '20% capacity', b: 4 },
    { a: '20% capacity', b: 1 },
  ];
  assert.deepEqual([...rows].sort(compareByLevels(['a', 'b'], rows)), [
    { a: '20% capacity', b: 1 },
    { a: '20% capacity', b: 4 },
    { a: '70% capacity', b: 4 },
  ]);
});
