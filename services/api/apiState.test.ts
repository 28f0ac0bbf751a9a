import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyApiState } from './apiState.js';
import { WorkerPool } from './workerPool.js';

test('the api state switch: workFactor and workers applied, reset restores the declared api, bad bodies change nothing', () => {
  const handler = { workFactor: 1 };
  const pool = new WorkerPool(8);
  assert.equal(applyApiState({ workFactor: 3 }, handler, pool, 8), undefined);
  assert.equal(handler.workFactor, 3);
  assert.equal(applyApiState({ workers: 2 }, handler, pool, 8), undefined);
  assert.equal(pool.workers, 2);
  for (const [body, why] of [
    [[], /JSON object/],
    [{ workFactor: 0 }, /workFactor must be a number above 0/],
    [{ workFactor: '3' }, /workFactor must be a number/],
    [{ workers: 0 }, /workers must be a whole number/],
    [{ workers: 2.5 }, /workers must be a whole number/],
    [{ speed: 2 }, /unknown field speed/],
    [{ reset: true, workers: 3 }, /reset is true, alone/],
  ] as const) {
    assert.match(applyApiState(body, handler, pool, 8) ?? '', why, JSON.stringify(body));
    assert.deepEqual([handler.workFactor, pool.workers], [3, 2], `${JSON.stringify(body)} changed nothing`);
  }
  assert.equal(applyApiState({ reset: true }, handler, pool, 8), undefined);
  assert.deepEqual([handler.workFactor, pool.workers], [1, 8]);
});
