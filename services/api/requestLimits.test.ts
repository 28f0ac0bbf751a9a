import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deadlineHeaderMs, firstLimit, requestLimits } from './requestLimits.js';

test('the limits count from arrival: the request timeout and the propagated deadline', () => {
  assert.deepEqual(requestLimits(1000, 400, 250), { timeoutAtMs: 1400, deadlineMs: 1250 });
  assert.deepEqual(requestLimits(1000, undefined, undefined), {
    timeoutAtMs: undefined,
    deadlineMs: undefined,
  });
  // A header that is not a number sets no deadline (the api never drops on NaN).
  assert.deepEqual(requestLimits(5, 10, NaN), { timeoutAtMs: 15, deadlineMs: undefined });
  assert.equal(requestLimits(5, undefined, 0).deadlineMs, 5, 'no time left: due at arrival');
});

test('x-deadline-ms is read as sent; absent is undefined', () => {
  assert.equal(deadlineHeaderMs({ 'x-deadline-ms': '120' }), 120);
  assert.ok(Number.isNaN(deadlineHeaderMs({ 'x-deadline-ms': 'soon' })));
  assert.equal(deadlineHeaderMs({}), undefined);
});

test('the first limit ends a started request; the deadline only where the api honours it', () => {
  const both = requestLimits(0, 400, 250);
  assert.deepEqual(firstLimit(both, true), { atMs: 250, kind: 'deadline' });
  assert.deepEqual(firstLimit(both, false), { atMs: 400, kind: 'timeout' });
  assert.deepEqual(firstLimit(requestLimits(0, 100, 250), true), { atMs: 100, kind: 'timeout' });
  // A tie is the timeout's, as at pickup.
  assert.deepEqual(firstLimit(requestLimits(0, 250, 250), true), { atMs: 250, kind: 'timeout' });
  assert.deepEqual(firstLimit(requestLimits(0, undefined, 250), true), { atMs: 250, kind: 'deadline' });
  assert.equal(firstLimit(requestLimits(0, undefined, 250), false), undefined);
  assert.equal(firstLimit(requestLimits(0, undefined, undefined), true), undefined);
});
