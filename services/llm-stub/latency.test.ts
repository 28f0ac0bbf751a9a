import { test } from 'node:test';
import assert from 'node:assert/strict';
import { requestRng } from './faults.js';
import { baseTtftMs, planResponse, totalMs } from './latency.js';
import { loadProfile, profileSchema, type Profile } from './profile.js';

const base = loadProfile();

function variant(patch: (p: Record<string, unknown>) => void): Profile {
  const raw = structuredClone({
    ...base,
    ttft: { floor: '250ms', prefillPer1kTokens: '250ms', jitter: { mean: '100ms', sigma: 0.6 } },
    tokens: { gap: { mean: '20ms', sigma: 0.35 } },
    tail: { fraction: '2%', ttftFactor: '6x', tokenFactor: '2x' },
    embeddings: {
      ...base.embeddings,
      floor: '30ms',
      perKTokens: '10ms',
      jitter: { mean: '10ms', sigma: 0.5 },
    },
    rateLimits: { ...base.rateLimits, retryAfter: '1s' },
  }) as Record<string, unknown>;
  patch(raw);
  return profileSchema.parse(raw);
}

const plan = (p: Profile, key: string, promptTokens: number, maxTokens?: number) =>
  planResponse(p, { promptTokens, maxTokens }, requestRng(7, key, 'latency'));

test('the same key gives the same plan; another key another one', () => {
  assert.deepEqual(plan(base, 'a', 500), plan(base, 'a', 500));
  assert.notEqual(plan(base, 'a', 500).ttftMs, plan(base, 'b', 500).ttftMs);
});

test('time to first token grows with the prompt: by exactly the prefill per 1k tokens, for the same draws', () => {
  let small = 0;
  let big = 0;
  for (let k = 0; k < 300; k++) {
    const a = plan(base, `k${k}`, 100);
    const b = plan(base, `k${k}`, 8100);
    const factor = a.slow ? base.tail.ttftFactor : 1;
    assert.ok(Math.abs(b.ttftMs - a.ttftMs - 8 * base.ttft.prefillPer1kTokens * factor) < 1e-6);
    small += a.ttftMs;
    big += b.ttftMs;
  }
  assert.ok(big / 300 > small / 300 + 1500, `mean TTFT ${small / 300} → ${big / 300}`);
  assert.equal(baseTtftMs(base, 2000), 250 + 500);
});

test('TTFT is never below the floor and its jitter has the declared mean', () => {
  const p = variant((r) => ((r['tail'] as Record<string, unknown>)['fraction'] = '0%'));
  let sum = 0;
  const n = 4000;
  for (let k = 0; k < n; k++) {
    const t = plan(p, `j${k}`, 0).ttftMs;
    assert.ok(t > 250);
    sum += t - 250;
  }
  // Lognormal mean 100 ms, sigma 0.6: sd ≈ 66 ms, so the mean of 4000 is within ±5 ms at 4.8 sigma.
  assert.ok(Math.abs(sum / n - 100) < 5, `jitter mean ${sum / n}`);
});

test('total time grows with the output tokens', () => {
  const p = variant((r) => (r['output'] = { dist: 'constant', mean: 400 }));
  for (let k = 0; k < 50; k++) {
    const totals = [1, 10, 100, 400].map((m) => totalMs(plan(p, `t${k}`, 200, m)));
    for (let i = 1; i < totals.length; i++) assert.ok(totals[i]! > totals[i - 1]!, `${totals}`);
  }
  // And on average: the mean token gap is 20 ms.
  let sum = 0;
  for (let k = 0; k < 500; k++) {
    const a = plan(p, `m${k}`, 200, 50);
    const b = plan(p, `m${k}`, 200, 250);
    sum += (totalMs(b) - totalMs(a)) / (a.slow ? p.tail.tokenFactor : 1);
  }
  assert.ok(Math.abs(sum / 500 - 200 * 20) < 200, `200 more tokens cost ${sum / 500} ms`);
});

test('max_tokens caps the drawn length and the answer finishes with "length"', () => {
  const p = variant((r) => (r['output'] = { dist: 'constant', mean: 30 }));
  const capped = plan(p, 'x', 10, 5);
  assert.equal(capped.outputTokens, 5);
  assert.equal(capped.finishReason, 'length');
  assert.equal(capped.gapsMs.length, 4);
  const free = plan(p, 'x', 10, 100);
  assert.equal(free.outputTokens, 30);
  assert.equal(free.finishReason, 'stop');
});

test('output lengths follow the profile: lognormal around the mean, clamped to [min, max]', () => {
  const p = variant((r) => (r['output'] = { dist: 'lognormal', mean: 128, sigma: 0.5, min: 10, max: 300 }));
  let sum = 0;
  for (let k = 0; k < 3000; k++) {
    const n = plan(p, `o${k}`, 10).outputTokens;
    assert.ok(n >= 10 && n <= 300);
    sum += n;
  }
  assert.ok(Math.abs(sum / 3000 - 128) < 6, `mean length ${sum / 3000}`);
});

test('the slow-tail fraction is within tolerance and slow requests are slower by the factors', () => {
  const n = 20_000;
  let slow = 0;
  for (let k = 0; k < n; k++) if (plan(base, `s${k}`, 100).slow) slow++;
  // Binomial(20000, 0.02): sd ≈ 0.00099; 4 sd.
  assert.ok(Math.abs(slow / n - 0.02) < 0.004, `slow fraction ${slow / n}`);

  const never = variant((r) => ((r['tail'] as Record<string, unknown>)['fraction'] = '0%'));
  const always = variant((r) => ((r['tail'] as Record<string, unknown>)['fraction'] = '100%'));
  for (let k = 0; k < 20; k++) {
    // The tail draw comes first, so the rest of the draws are the same in both.
    const a = plan(never, `f${k}`, 1000, 20);
    const b = plan(always, `f${k}`, 1000, 20);
    assert.ok(Math.abs(b.ttftMs / a.ttftMs - 6) < 1e-9);
    for (let i = 0; i < a.gapsMs.length; i++) assert.ok(Math.abs(b.gapsMs[i]! / a.gapsMs[i]! - 2) < 1e-9);
  }
});

test('the provider-wide slow factor multiplies TTFT and every gap', () => {
  const a = planResponse(base, { promptTokens: 100, maxTokens: 10 }, requestRng(1, 'z', 'latency'));
  const b = planResponse(
    base,
    { promptTokens: 100, maxTokens: 10, slowFactor: 3 },
    requestRng(1, 'z', 'latency'),
  );
  assert.ok(Math.abs(b.ttftMs / a.ttftMs - 3) < 1e-9);
  assert.ok(Math.abs(totalMs(b) / totalMs(a) - 3) < 1e-9);
});
