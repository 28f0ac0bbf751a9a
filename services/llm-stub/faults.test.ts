import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRates, decideFate, NO_FAULTS, type Fate, type FaultRates } from './faults.js';

const rates: FaultRates = { rateLimit: 0.1, serverError: 0.15, contextLength: 0.05, cut: 0.1, hang: 0.05 };

test('a fate depends on the seed and the key only, not on the order of the requests', () => {
  const keys = Array.from({ length: 500 }, (_, i) => `#${i}`);
  const inOrder = new Map(keys.map((k) => [k, decideFate(42, k, rates)]));
  const shuffled = [...keys].sort(() => 0.5 - Math.random());
  for (const k of shuffled) assert.deepEqual(decideFate(42, k, rates), inOrder.get(k));
  const other = keys.filter((k) => decideFate(43, k, rates).fate !== inOrder.get(k)!.fate);
  assert.ok(other.length > 50, 'another seed gives other fates');
});

test('each fate gets its share of requests', () => {
  const n = 20_000;
  const counts = new Map<Fate, number>();
  for (let i = 0; i < n; i++) {
    const f = decideFate(1, `#${i}`, rates).fate;
    counts.set(f, (counts.get(f) ?? 0) + 1);
  }
  const expect: Record<Fate, number> = {
    ok: 0.55,
    rate_limit: 0.1,
    server_error: 0.15,
    context_length: 0.05,
    cut: 0.1,
    hang: 0.05,
  };
  for (const [fate, share] of Object.entries(expect)) {
    const got = (counts.get(fate as Fate) ?? 0) / n;
    // 4 binomial sds at n = 20000 is at most 0.0141.
    assert.ok(Math.abs(got - share) < 0.015, `${fate}: ${got} vs ${share}`);
  }
});

test('no faults: every request is ok; a cut falls strictly inside the answer', () => {
  for (let i = 0; i < 1000; i++) {
    const d = decideFate(5, `#${i}`, NO_FAULTS);
    assert.equal(d.fate, 'ok');
    assert.ok(d.cutAt > 0 && d.cutAt < 1);
  }
});

test("raising one rate changes no other request's fate into a different fault", () => {
  const more = { ...rates, hang: 0.1 };
  for (let i = 0; i < 2000; i++) {
    const a = decideFate(9, `#${i}`, rates).fate;
    const b = decideFate(9, `#${i}`, more).fate;
    if (a !== b) assert.ok(a === 'ok' && b === 'hang', `${a} → ${b}`);
  }
});

test('rates outside 0..1 or adding up to more than 1 are refused in words', () => {
  assert.equal(checkRates(rates), undefined);
  assert.match(checkRates({ ...rates, cut: 1.5 }) ?? '', /cut must be between 0 and 1/);
  assert.match(checkRates({ ...rates, serverError: 0.8 }) ?? '', /add up to 1\.1,/);
});
