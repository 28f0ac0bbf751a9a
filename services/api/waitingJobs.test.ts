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

test('blocks taken and given back, shared stand-ins, times as offsets: the same jobs and times as a plain list, in either order', () => {
  // A pseudo-random walk of pushes, pops and replaces against an array, blocks of 4 slots.
  let seed = 7;
  const rand = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (const discipline of ['fifo', 'lifo'] as const) {
    for (const timeouts of ['offset', 'mixed'] as const) {
      const q = new WaitingJobs<string>(discipline, Infinity, 4);
      const model: { t: number; job: string; times: [number, number, number] }[] = [];
      for (let n = 0; n < 20_000; n++) {
        const r = rand();
        // Phases of growth and of draining, so blocks come and go.
        const grow = Math.floor(n / 2000) % 2 === 0;
        if (r < (grow ? 0.6 : 0.35)) {
          const enq = n + rand();
          const timeoutAt =
            timeouts === 'offset' || rand() < 0.9 ? enq + 30_000 : rand() < 0.5 ? NaN : enq + 7;
          const deadline = n > 10_000 && rand() < 0.5 ? enq + rand() * 100 : NaN;
          const job = `j${n}`;
          model.push({ t: q.push(job, enq, timeoutAt, deadline), job, times: [enq, timeoutAt, deadline] });
        } else if (r < 0.85 || model.length === 0) {
          const job = q.pop();
          const k = discipline === 'fifo' ? 0 : model.length - 1;
          const want = model.splice(k, 1)[0];
          assert.equal(job, want?.job);
          if (want)
            assert.deepEqual([q.poppedEnqueuedMs, q.poppedTimeoutAtMs, q.poppedDeadlineMs], want.times);
        } else {
          const w = model[Math.floor(rand() * model.length)]!;
          w.job = rand() < 0.95 ? 'gone' : 'other';
          q.replace(w.t, w.job);
        }
        assert.equal(q.length, model.length);
        if (n % 997 === 0) assert.equal(q.distinctJobs(), new Set(model.map((m) => m.job)).size);
      }
    }
  }
});
