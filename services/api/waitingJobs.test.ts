import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WaitingJobs } from './waitingJobs.js';

const drain = (q: WaitingJobs<string>): [string, number, number, number][] => {
  const out: [string, number, number, number][] = [];
  for (let j = q.pop(); j !== undefined; j = q.pop())
    out.push([j, q.poppedEnqueuedMs, q.poppedTimeoutAtMs, q.poppedDeadlineMs]);
  return out;
};

test('FIFO serves the oldest first, LIFO the newest, each with its own times, through growth and wrap-around', () => {
  for (const discipline of ['fifo', 'lifo'] as const) {
    const q = new WaitingJobs<string>(discipline, Infinity, 2);
    const expected: [string, number, number, number][] = [];
    // Interleave pushes and pops so the ring wraps before it grows.
    for (let i = 0; i < 100; i++) {
      // Timeouts and deadlines appear only after the ring has grown and wrapped.
      const timeoutAt = i % 3 || i < 50 ? NaN : i + 1000;
      const deadline = i > 20 ? i * 2 : NaN;
      q.push(`j${i}`, i + 0.5, timeoutAt, deadline);
      expected.push([`j${i}`, i + 0.5, timeoutAt, deadline]);
      if (i % 4 === 3) {
        const j = q.pop()!;
        const k = expected.findIndex((e) => e[0] === j);
        assert.equal(k, discipline === 'fifo' ? 0 : expected.length - 1);
        assert.equal(q.poppedEnqueuedMs, expected[k]![1]);
        expected.splice(k, 1);
      }
    }
    assert.equal(q.length, expected.length);
    assert.deepEqual(drain(q), discipline === 'fifo' ? expected : expected.reverse());
    assert.equal(q.length, 0);
    assert.equal(q.pop(), undefined);
  }
});

test('a bounded queue refuses past its bound (-1) and takes again once there is room', () => {
  for (const discipline of ['fifo', 'lifo'] as const) {
    const q = new WaitingJobs<string>(discipline, 2);
    assert.ok(q.push('a', 0, NaN, NaN) >= 0);
    assert.ok(q.push('b', 0, NaN, NaN) >= 0);
    assert.equal(q.push('c', 0, NaN, NaN), -1);
    assert.equal(q.length, 2);
    q.pop();
    assert.ok(q.push('d', 0, NaN, NaN) >= 0);
  }
  assert.throws(() => new WaitingJobs('fifo', -1), /queue bound must be >= 0/);
});

test('replace puts a stand-in in a waiting job’s place with its times: 10,000 abandoned jobs are one object', () => {
  const q = new WaitingJobs<string>('fifo');
  const tickets: number[] = [];
  for (let i = 0; i < 10_000; i++) tickets.push(q.push(`j${i}`, i, NaN, NaN));
  assert.equal(q.distinctJobs(), 10_000);
  for (let i = 0; i < 10_000; i++) if (i !== 5000) q.replace(tickets[i]!, 'gone');
  assert.equal(q.distinctJobs(), 2);
  const out = drain(q);
  assert.deepEqual(
    out.map(([j, enq]) => [j, enq]),
    Array.from({ length: 10_000 }, (_, i) => [i === 5000 ? 'j5000' : 'gone', i]),
  );
  assert.throws(() => q.replace(tickets[0]!, 'gone'), /no waiting job has ticket/);
});
