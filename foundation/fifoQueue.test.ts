import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FifoQueue } from './fifoQueue.js';

test('FIFO order across the compaction of its array, with the newest, the oldest and a put-back at either end', () => {
  const q = new FifoQueue<number>();
  for (let i = 0; i < 5000; i++) q.push(i);
  for (let i = 0; i < 3000; i++) assert.equal(q.pop(), i);
  assert.equal(q.length, 2000);
  assert.equal(q.peek(), 3000);
  assert.equal(q.popNewest(), 4999);
  q.unshift(-1);
  assert.equal(q.pop(), -1);
  assert.equal(q.pop(), 3000);
  const rest = q.drain();
  assert.deepEqual(
    rest,
    Array.from({ length: 1998 }, (_, i) => 3001 + i),
  );
  assert.equal(q.length, 0);
  assert.equal(q.pop(), undefined);
  assert.equal(q.popNewest(), undefined);
  assert.equal(q.peek(), undefined);
  q.unshift(7);
  assert.equal(q.pop(), 7);
});

test('a bounded FIFO refuses a push when full, and takes one again once an item leaves', () => {
  const q = new FifoQueue<string>(2);
  assert.equal(q.push('a'), true);
  assert.equal(q.push('b'), true);
  assert.equal(q.push('c'), false);
  assert.equal(q.pop(), 'a');
  assert.equal(q.push('c'), true);
  assert.deepEqual(q.drain(), ['b', 'c']);
});

test('null is an item like any other (the fault proxy queues an end of stream as null)', () => {
  const q = new FifoQueue<string | null>();
  q.push('x');
  q.push(null);
  assert.equal(q.pop(), 'x');
  assert.equal(q.pop(), null);
  assert.equal(q.length, 0);
});
