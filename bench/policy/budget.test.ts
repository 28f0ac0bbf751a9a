import { test } from 'node:test';
import assert from 'node:assert/strict';
import { awsBudget, ratioBudget, TokenBucket } from './budget.js';

test('ratio budget: starts with its burst, then refills 0.1 token per request (one retry per 10 requests)', () => {
  const b = ratioBudget(0.1, 3);
  assert.equal(b.tokens, 3);
  // The burst: three retries at once, then none.
  assert.deepEqual(
    [1, 2, 3, 4].map(() => b.acquire('timeout')),
    [1, 1, 1, 0],
  );
  // Nine requests are not enough for a retry; the tenth is.
  for (let i = 0; i < 9; i++) b.onRequest();
  assert.equal(b.acquire('timeout'), 0);
  b.onRequest();
  assert.equal(b.acquire('http-5xx'), 1);
  assert.equal(b.acquire('http-5xx'), 0);
  // Refill stops at the burst size.
  for (let i = 0; i < 1000; i++) b.onRequest();
  assert.ok(Math.abs(b.tokens - 3) < 1e-9);
  // Successes do not add tokens in the SRE style.
  b.acquire('timeout');
  b.onSuccess(0);
  b.onSuccess(1);
  assert.ok(Math.abs(b.tokens - 2) < 1e-9);
});

test('ratio budget: over a long run of failures, retries stay at the ratio of requests', () => {
  const b = ratioBudget(0.1, 10);
  let retries = 0;
  const requests = 10_000;
  for (let i = 0; i < requests; i++) {
    b.onRequest();
    // Every origin fails and wants 3 retries.
    for (let k = 0; k < 3; k++) if (b.acquire('timeout') > 0) retries++;
  }
  // At most ratio x requests + the initial burst.
  assert.ok(retries <= 0.1 * requests + 10, `retries ${retries}`);
  assert.ok(retries >= 0.1 * requests - 1, `retries ${retries}`);
});

test('AWS-style budget: 500 tokens, a retry costs 5 (10 after a timeout), success refunds', () => {
  const b = awsBudget();
  assert.equal(b.tokens, 500);
  let n = 0;
  while (b.acquire('timeout') > 0) n++;
  assert.equal(n, 50); // 500 / 10
  assert.equal(b.acquire('http-5xx'), 0); // 0 left: even a 5-token retry is denied
  // A success without retry deposits 1; after 5 of them a 5xx retry may go.
  for (let i = 0; i < 4; i++) b.onSuccess(0);
  assert.equal(b.acquire('http-5xx'), 0);
  b.onSuccess(0);
  assert.equal(b.acquire('http-5xx'), 5);
  // That retry succeeded: its 5 tokens come back.
  b.onSuccess(5);
  assert.equal(b.tokens, 5);
  // Never above capacity.
  for (let i = 0; i < 1000; i++) b.onSuccess(0);
  assert.equal(b.tokens, 500);
  // Requests deposit nothing in this style.
  const c = awsBudget({ capacity: 10 });
  c.acquire('timeout');
  c.onRequest();
  assert.equal(c.tokens, 0);
});

test('a hedge costs a plain retry', () => {
  const b = awsBudget({ capacity: 12, retryCost: 4, timeoutCost: 12 });
  assert.equal(b.acquire('hedge'), 4);
  assert.equal(b.tokens, 8);
});

test('a bucket with impossible parameters is refused', () => {
  assert.throws(
    () =>
      new TokenBucket({
        capacity: 10,
        perRequest: 0.1,
        perSuccess: 0,
        refundOnSuccess: false,
        retryCost: 0,
        timeoutCost: 1,
      }),
    RangeError,
  );
  assert.throws(() => ratioBudget(Number.NaN, 10), RangeError);
});
