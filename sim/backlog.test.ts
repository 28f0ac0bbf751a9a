import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOf } from '../test/helpers/plan.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import { SimApi } from './api.js';

registerRuntimes();

/**
 * A collapse (25 workers × 20 ms: 1,250/s against 1,000/s with retries, after a pause)
 * whose unbounded FIFO queue grows for `observeS`: the api queues every attempt, and
 * the clients of nearly all of them have left (500 ms timeout).
 */
const collapse = (observeS: number): string => `
name: backlog
lab:
  api: { workers: 25, work: { dist: exponential, mean: 20ms } }
load: { arrival: poisson, rate: 1000/s }
client: { timeout: 500ms, retry: { policy: immediate, maxAttempts: 4 } }
schedule: { warmup: 2s, baseline: 8s, trigger: { kind: pause, target: api, duration: 5s }, observe: ${observeS}s }
recovery: { within: 5x, tolerance: 10%, window: 5s, hold: 10s }
seed: 7
`;

test('a collapsed api keeps requests whose clients left as their times alone: its objects do not grow with the backlog', async () => {
  const short = await simulate(planOf(collapse(10)));
  const long = await simulate(planOf(collapse(30)));
  const depth = (r: typeof short): number => r.lab.api.queueDepth;
  assert.ok(depth(long) > depth(short) + 20_000, `the backlog grows (${depth(short)} → ${depth(long)})`);
  // What still is an object: requests whose clients wait (at most 500 ms of attempts) and one stand-in.
  for (const r of [short, long])
    assert.ok(r.lab.api.waitingObjects < 2_000, `${r.lab.api.waitingObjects} objects`);
});

test('the compact backlog costs the api the same: series and summary equal those of a backlog kept whole', async () => {
  const compact = await simulate(planOf(collapse(15)));
  // The api as before: it forgets a request whose client left only once it answered it.
  const clientClosed = Object.getOwnPropertyDescriptor(SimApi.prototype, 'clientClosed')!;
  Object.defineProperty(SimApi.prototype, 'clientClosed', { value: () => undefined, configurable: true });
  let whole;
  try {
    whole = await simulate(planOf(collapse(15)));
  } finally {
    Object.defineProperty(SimApi.prototype, 'clientClosed', clientClosed);
  }
  assert.ok(
    whole.lab.api.waitingObjects > 10 * compact.lab.api.waitingObjects,
    'the whole backlog is objects',
  );
  assert.deepEqual(compact.server, whole.server);
  assert.deepEqual(compact.summary, whole.summary);
  assert.deepEqual(compact.lab.api.counters, whole.lab.api.counters);
});
