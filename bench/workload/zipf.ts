import type { Rng } from '../../foundation/rng.js';

/**
 * A Zipf sampler over ranks 1..n with P(k) ∝ 1 / k^s, by rejection-inversion
 * (Hörmann & Derflinger 1996, as in Apache Commons RNG): O(1) memory and expected
 * time whatever the cardinality, exact for any exponent s > 0.
 */
export function zipfSampler(n: number, s: number, rng: Rng): () => number {
  if (!(n >= 1) || !Number.isInteger(n))
    throw new RangeError(`zipf: the number of keys must be a whole number >= 1 (got ${n})`);
  if (!(s > 0)) throw new RangeError(`zipf: the exponent must be > 0 (got ${s})`);
  const h = (x: number): number => Math.exp(-s * Math.log(x));
  const hIntegral = (x: number): number => {
    const logX = Math.log(x);
    return helper2((1 - s) * logX) * logX;
  };
  const hIntegralInverse = (x: number): number => {
    let t = x * (1 - s);
    if (t < -1) t = -1; // numerical guard, as in the reference implementation
    return Math.exp(helper1(t) * x);
  };
  const hX1 = hIntegral(1.5) - 1;
  const hN = hIntegral(n + 0.5);
  const sCut = 2 - hIntegralInverse(hIntegral(2.5) - h(2));
  return () => {
    for (;;) {
      const u = hN + rng.next() * (hX1 - hN);
      const x = hIntegralInverse(u);
      let k = Math.round(x);
      if (k < 1) k = 1;
      else if (k > n) k = n;
      if (k - x <= sCut || u >= hIntegral(k + 0.5) - h(k)) return k;
    }
  };
}

/** log(1 + x) / x, continuous at 0. */
function helper1(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x / 2 + (x * x) / 3;
}

/** (exp(x) - 1) / x, continuous at 0. */
function helper2(x: number): number {
  return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x / 2 + (x * x) / 6;
}
