import { test } from 'node:test';
import assert from 'node:assert/strict';
import { entry, GeneratorBuilder, maxExitRate, maxRowSum, type Generator } from './generator.js';
import { meanFirstPassage, passageProbability, relaxation, stationary } from './levels.js';
import { METAFOR_ALPHA, readChain, retryChain, timeoutTail, type RetryChainParams } from './retryChain.js';

const close = (got: number, want: number, rel: number, what: string): void =>
  assert.ok(Math.abs(got - want) <= rel * Math.abs(want), `${what}: ${got} vs ${want} (±${rel * 100}%)`);

/** M/M/1/K as a one-state-per-level chain (levels 0..K). */
function mm1k(lambda: number, mu: number, k: number): Generator {
  const b = new GeneratorBuilder(k + 1, 1);
  for (let n = 0; n <= k; n++) {
    if (n < k) b.add(n, n + 1, lambda);
    if (n > 0) b.add(n, n - 1, mu);
  }
  return b.build();
}

/** Metafor's README system (μ 10/s, one worker, queue 100, orbit 20, timeout 3 s, 4 retries). */
const metafor = (lambda: number): RetryChainParams => ({
  arrivalPerS: lambda,
  workers: 1,
  serviceRatePerS: 10,
  timeoutS: 3,
  retries: 4,
  orbitWaitS: 3,
  queueSize: 100,
  orbitSize: 20,
  alpha: METAFOR_ALPHA,
  granularity: 1,
});

test("the retry chain's generator: every row sums to zero, rates as written", () => {
  for (const p of [metafor(2), metafor(9.5), { ...metafor(6), workers: 3, granularity: 2, orbitWaitS: 4 }]) {
    const q = retryChain(p);
    assert.equal(q.size, p.queueSize * p.orbitSize);
    assert.ok(maxRowSum(q) < 1e-12, `row sum ${maxRowSum(q)}`);
  }
  const q = retryChain(metafor(6));
  const O = 20;
  const at = (n: number, o: number): number => n * O + o;
  const tail = timeoutTail(15, 1, 10, 3);
  assert.ok(tail > 0 && tail < 1);
  const muR = 4 / (5 * 3);
  // From (15, 5): arrivals, retries that will and will not time out again, give-ups, a completion.
  close(entry(q, at(15, 5), at(16, 6)), 0.25 * 6 * tail, 1e-12, 'α λ tail');
  close(entry(q, at(15, 5), at(16, 5)), 6 + 5 * muR * tail, 1e-12, 'λ + o μ_r tail');
  close(entry(q, at(15, 5), at(16, 4)), 5 * muR * (1 - tail), 1e-12, 'o μ_r (1 − tail)');
  close(entry(q, at(15, 5), at(15, 4)), 5 / 15, 1e-12, 'o μ_d');
  close(entry(q, at(15, 5), at(14, 5)), 10, 1e-12, 'service');
  // A full server loses what arrives: only the orbit decays (retries lost) and work completes.
  assert.equal(entry(q, at(99, 5), at(99, 6)), 0);
  close(entry(q, at(99, 5), at(99, 4)), 5 * (muR + 1 / 15), 1e-12, 'orbit decay at a full server');
  // No timeout with an empty queue; Chebyshev's bound is 1 once the mean wait is near τ.
  assert.equal(timeoutTail(0, 1, 10, 3), 0);
  assert.equal(timeoutTail(30, 1, 10, 3), 1);
});

test('M/M/1/K: the stationary distribution and first-passage times equal their closed forms', () => {
  const [lambda, mu, k] = [7, 10, 40];
  const rho = lambda / mu;
  const q = mm1k(lambda, mu, k);
  const pi = stationary(q);
  for (let n = 0; n <= k; n++) close(pi[n]!, ((1 - rho) * rho ** n) / (1 - rho ** (k + 1)), 1e-9, `π(${n})`);
  // Down one level from n: t_n = (1/μ) Σ_{j=0}^{K−n} ρ^j; from K to 0, Σ t_n.
  let down = 0;
  for (let n = 1; n <= k; n++) {
    let s = 0;
    for (let j = 0; j <= k - n; j++) s += rho ** j;
    down += s / mu;
  }
  close(meanFirstPassage(q, { below: 1 })[k]!, down, 1e-9, 'E[time K → 0]');
  // Up one level from n: u_n = (1/λ) Σ_{j=0}^{n} (μ/λ)^j; from 0 to K, Σ u_n.
  let up = 0;
  for (let n = 0; n < k; n++) {
    let s = 0;
    for (let j = 0; j <= n; j++) s += (mu / lambda) ** j;
    up += s / lambda;
  }
  close(meanFirstPassage(q, { atLeast: k })[0]!, up, 1e-9, 'E[time 0 → K]');
  // Its spectrum is known: the slowest mode decays at λ + μ − 2√(λμ) cos(π/(K+1)).
  const gap = relaxation(q, pi, maxExitRate(q));
  assert.ok(gap.converged);
  close(
    gap.ratePerS,
    lambda + mu - 2 * Math.sqrt(lambda * mu) * Math.cos(Math.PI / (k + 1)),
    1e-6,
    'spectral gap',
  );
});

test('levels wider than one state: two independent queues have a product-form stationary distribution', () => {
  // Level = queue A (0..K), state within the level = queue B (0..W−1): the block solvers with width > 1.
  const [la, ma, lb, mb, K, W] = [3, 5, 6, 4, 12, 9];
  const b = new GeneratorBuilder(K + 1, W);
  for (let n = 0; n <= K; n++)
    for (let o = 0; o < W; o++) {
      const i = n * W + o;
      if (n < K) b.add(i, i + W, la);
      if (n > 0) b.add(i, i - W, ma);
      if (o < W - 1) b.add(i, i + 1, lb);
      if (o > 0) b.add(i, i - 1, mb);
    }
  const q = b.build();
  const pi = stationary(q);
  const trunc = (r: number, m: number, j: number): number => ((1 - r) * r ** j) / (1 - r ** (m + 1));
  for (let n = 0; n <= K; n++)
    for (let o = 0; o < W; o++)
      close(pi[n * W + o]!, trunc(la / ma, K, n) * trunc(lb / mb, W - 1, o), 1e-9, `π(${n}, ${o})`);
  // Queue A's passage does not depend on queue B: every state of a level has the same mean time.
  const t = meanFirstPassage(q, { below: 1 });
  const ref = meanFirstPassage(
    (() => {
      const c = new GeneratorBuilder(K + 1, 1);
      for (let n = 0; n <= K; n++) {
        if (n < K) c.add(n, n + 1, la);
        if (n > 0) c.add(n, n - 1, ma);
      }
      return c.build();
    })(),
    { below: 1 },
  );
  for (let n = 0; n <= K; n++)
    for (let o = 0; o < W; o++) close(t[n * W + o]!, ref[n]!, 1e-9, `t(${n}, ${o})`);
});

test('the probability of a passage within t: a pure drain of two jobs is Erlang-2', () => {
  const mu = 3;
  const b = new GeneratorBuilder(3, 1);
  b.add(1, 0, mu);
  b.add(2, 1, mu);
  const q = b.build();
  const ts = [0.1, 0.5, 1, 3];
  const got = passageProbability(q, { below: 1 }, 2, ts, maxExitRate(q));
  ts.forEach((t, k) => close(got[k]!, 1 - Math.exp(-mu * t) * (1 + mu * t), 1e-6, `P(T ≤ ${t})`));
  // Unaffordable horizons are refused, not guessed.
  assert.deepEqual(passageProbability(q, { below: 1 }, 2, [1e9], maxExitRate(q)), [null]);
});

test("Metafor's README system reproduces the R13 reference values (research/metastability.md §9) within 5%", () => {
  // R13 reads "mean time from (q 99, orbit 0) to q < 10"; the full server is q 99 of qsize 100.
  const regions = { collapsedFrom: 30, healthyBelow: 10 };
  const at2 = readChain(metafor(2), { regions, gap: true });
  close(at2.meanJobs, 0.25, 0.05, 'E[q] at λ 2');
  close(at2.relaxation!.ratePerS, 0.333, 0.05, '−λ₂ at λ 2');
  close(at2.recoveryS!, 13, 0.05, 'recovery at λ 2');
  const at5 = readChain(metafor(5), { regions });
  close(at5.meanJobs, 1.0, 0.05, 'E[q] at λ 5');
  close(at5.recoveryS!, 328, 0.05, 'recovery at λ 5');
  close(readChain(metafor(6), { regions }).recoveryS!, 41_053, 0.05, 'recovery at λ 6');
  close(readChain(metafor(7), { regions }).recoveryS!, 1.1e7, 0.05, 'recovery at λ 7');
  for (const l of [8, 9.5]) {
    const r = readChain(metafor(l), { regions });
    assert.ok(r.meanJobs > 95 && r.meanJobs < 98, `E[q] at λ ${l}: ${r.meanJobs}`);
  }
});
