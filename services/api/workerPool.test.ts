import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool } from './workerPool.js';

test('the pool runs at most c jobs at once and serves the queue in FIFO order', async () => {
  const pool = new WorkerPool(2);
  const started: number[] = [];
  const release: (() => void)[] = [];
  let maxBusy = 0;
  for (let i = 0; i < 6; i++) {
    pool.submit({
      enqueuedMs: performance.now(),
      run: () =>
        new Promise<void>((resolve) => {
          started.push(i);
          maxBusy = Math.max(maxBusy, pool.busyWorkers);
          release.push(resolve);
        }),
    });
  }
  assert.deepEqual(started, [0, 1]);
  assert.equal(pool.queueDepth, 4);
  for (let k = 0; k < 6; k++) {
    release.shift()!();
    await new Promise((r) => setImmediate(r));
  }
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5]);
  assert.equal(maxBusy, 2);
  assert.equal(pool.queueDepth, 0);
  assert.equal(pool.busyWorkers, 0);
});

test('a pool needs at least one worker', () => {
  assert.throws(() => new WorkerPool(0), RangeError);
});
