import { addProduct, Lu } from './dense.js';
import type { Generator } from './generator.js';

/**
 * Exact solvers for a level (block-tridiagonal) generator: block Gaussian elimination from
 * the top level down, the chain's own structure standing in for a general sparse LU (no
 * fill-in outside the blocks, no iteration to converge, no stopping rule to tune). The
 * matrices it eliminates are M-matrices (a generator restricted to transient states, or
 * shifted by σ > 0), for which block elimination without pivoting across levels is stable;
 * each block is factorised with partial pivoting. Cost O(levels × width³), memory two
 * width × width blocks per level.
 */

/** Q's block from level n to level n + dn, dense (width × width). */
export function block(q: Generator, n: number, dn: -1 | 0 | 1): Float64Array {
  const w = q.width;
  const out = new Float64Array(w * w);
  const lo = (n + dn) * w;
  for (let r = 0; r < w; r++) {
    const i = n * w + r;
    for (let k = q.rowStart[i]!; k < q.rowStart[i + 1]!; k++) {
      const c = q.cols[k]! - lo;
      if (c >= 0 && c < w) out[r * w + c] = q.vals[k]!;
    }
  }
  return out;
}

/**
 * (Q − σI) x = r on levels a..b, with x = 0 on the levels next to them (a target set, or
 * no level at all), factorised once so that many right-hand sides cost O(levels × width²).
 */
export class LevelSystem {
  private readonly lu: Lu[] = [];
  /** G_n: x_n = g_n + G_n x_{n−1}. */
  private readonly g: Float64Array[] = [];
  constructor(
    private readonly q: Generator,
    readonly a: number,
    readonly b: number,
    readonly shift = 0,
  ) {
    const w = q.width;
    let below: Float64Array | null = null;
    for (let n = b; n >= a; n--) {
      const m = block(q, n, 0);
      for (let i = 0; i < w; i++) m[i * w + i]! -= shift;
      if (below) addProduct(m, block(q, n, 1), below, w);
      const lu = new Lu(m, w);
      this.lu[n - a] = lu;
      if (n > a) {
        const gn = lu.solveMatrix(block(q, n, -1));
        for (let k = 0; k < gn.length; k++) gn[k] = -gn[k]!;
        this.g[n - a] = gn;
        below = gn;
      }
    }
  }

  /** x with (Q − σI) x = r on levels a..b (r and x indexed from level a's first state). */
  solve(r: Float64Array): Float64Array {
    const { q, a, b } = this;
    const w = q.width;
    const x = Float64Array.from(r);
    for (let n = b; n >= a; n--) {
      const off = (n - a) * w;
      if (n < b)
        for (let rr = 0; rr < w; rr++) {
          const i = n * w + rr;
          let s = 0;
          for (let k = q.rowStart[i]!; k < q.rowStart[i + 1]!; k++) {
            const c = q.cols[k]! - (n + 1) * w;
            if (c >= 0 && c < w) s += q.vals[k]! * x[off + w + c]!;
          }
          x[off + rr]! -= s;
        }
      this.lu[n - a]!.solve(x, off);
    }
    for (let n = a + 1; n <= b; n++) {
      const gn = this.g[n - a]!;
      const off = (n - a) * w;
      for (let i = 0; i < w; i++) {
        let s = 0;
        for (let j = 0; j < w; j++) s += gn[i * w + j]! * x[off - w + j]!;
        x[off + i]! += s;
      }
    }
    return x;
  }
}

/** Which states a first passage ends in: the levels below `below`, or from `atLeast` up. */
export type Target = { readonly below: number } | { readonly atLeast: number };

/**
 * Mean first-passage times into the target, for every state (seconds; 0 in the target):
 * Σ_j Q(i,j) t_j = −1 off the target, t = 0 on it.
 */
export function meanFirstPassage(q: Generator, target: Target): Float64Array {
  const [a, b] = 'below' in target ? [target.below, q.levels - 1] : [0, target.atLeast - 1];
  const t = new Float64Array(q.size);
  if (a > b) return t;
  const x = new LevelSystem(q, a, b).solve(new Float64Array((b - a + 1) * q.width).fill(-1));
  t.set(x, a * q.width);
  return t;
}

/**
 * The stationary distribution π (π Q = 0, Σ π = 1) by linear level reduction: π_n = π_{n−1} R_n
 * with R_n = −U_{n−1} (D_n + R_{n+1} L_{n+1})⁻¹, then π_0 from the censored chain on level 0.
 * Each level's vector is rescaled as it is made (log scale kept) so that a distribution whose
 * mass sits at the top does not underflow at the bottom, or the reverse.
 */
export function stationary(q: Generator): Float64Array {
  const w = q.width;
  const top = q.levels - 1;
  const r: Float64Array[] = [];
  let above: Float64Array | null = null;
  for (let n = top; n >= 1; n--) {
    const m = block(q, n, 0);
    if (above) addProduct(m, above, block(q, n + 1, -1), w);
    const rn = new Lu(m, w).solveMatrixRight(block(q, n - 1, 1));
    for (let k = 0; k < rn.length; k++) rn[k] = -rn[k]!;
    r[n] = rn;
    above = rn;
  }
  const b0 = block(q, 0, 0);
  if (above) addProduct(b0, above, block(q, 1, -1), w);
  // π_0 B0 = 0 is singular (B0 is the censored chain's generator): one equation, the last
  // column, becomes the normalisation π_0 · 1 = 1.
  for (let i = 0; i < w; i++) b0[i * w + w - 1] = 1;
  const p0 = new Float64Array(w);
  p0[w - 1] = 1;
  new Lu(b0, w).solveRow(p0);
  const pi = new Float64Array(q.size);
  const logScale = new Float64Array(q.levels);
  pi.set(p0, 0);
  for (let n = 1; n <= top; n++) {
    const rn = r[n]!;
    const prev = pi.subarray((n - 1) * w, n * w);
    const cur = pi.subarray(n * w, (n + 1) * w);
    for (let i = 0; i < w; i++) {
      const f = prev[i]!;
      if (f === 0) continue;
      for (let j = 0; j < w; j++) cur[j]! += f * rn[i * w + j]!;
    }
    let s = 0;
    for (let j = 0; j < w; j++) s += cur[j]!;
    logScale[n] = logScale[n - 1]!;
    if (s > 0) {
      for (let j = 0; j < w; j++) cur[j]! /= s;
      logScale[n]! += Math.log(s);
    }
  }
  // Level n holds π_n / e^{logScale[n]}: put the scales back relative to the largest.
  const peak = Math.max(...logScale);
  let total = 0;
  for (let n = 0; n <= top; n++) {
    const f = Math.exp(logScale[n]! - peak);
    for (let j = n * w; j < (n + 1) * w; j++) total += pi[j]! *= f;
  }
  for (let j = 0; j < q.size; j++) pi[j] = Math.max(0, pi[j]! / total);
  return pi;
}

export interface Relaxation {
  /** −λ₂: the slowest non-zero decay rate of the chain (1/s); its inverse is the relaxation time. */
  readonly ratePerS: number;
  readonly converged: boolean;
  readonly iterations: number;
}

/**
 * The spectral gap −λ₂ by shifted inverse iteration: (Q − σI)⁻¹ with a small σ > 0 (so the
 * system is a non-singular M-matrix and factorises once), the stationary mode (the constant
 * right eigenvector) projected out at each step. It finds the eigenvalue closest to 0 after 0
 * itself; it does not converge when that eigenvalue is one of a complex pair (a non-reversible
 * chain can have them), which is reported as not converged rather than guessed.
 */
export function relaxation(
  q: Generator,
  pi: Float64Array,
  maxExitRate: number,
  maxIterations = 300,
): Relaxation {
  const sigma = 1e-6 * maxExitRate;
  const sys = new LevelSystem(q, 0, q.levels - 1, sigma);
  const project = (v: Float64Array): void => {
    let s = 0;
    for (let i = 0; i < v.length; i++) s += pi[i]! * v[i]!;
    for (let i = 0; i < v.length; i++) v[i]! -= s;
    let norm = 0;
    for (let i = 0; i < v.length; i++) norm += v[i]! * v[i]!;
    norm = Math.sqrt(norm);
    if (norm > 0) for (let i = 0; i < v.length; i++) v[i]! /= norm;
  };
  // A fixed start (deterministic), rich in every mode.
  let x: Float64Array = Float64Array.from(
    { length: q.size },
    (_, i) => Math.sin(1 + 0.7 * i) + 0.01 * (i % 7),
  );
  project(x);
  let est = NaN;
  for (let it = 1; it <= maxIterations; it++) {
    const y = sys.solve(x);
    let xy = 0;
    for (let i = 0; i < y.length; i++) xy += x[i]! * y[i]!;
    const next = sigma + 1 / xy;
    project(y);
    x = y;
    if (Math.abs(next - est) <= 1e-7 * Math.abs(next))
      return { ratePerS: -next, converged: true, iterations: it };
    est = next;
  }
  return { ratePerS: -est, converged: false, iterations: maxIterations };
}

/**
 * P(the chain, started in state `from`, has entered the target by each time in `timesS`), by
 * uniformisation: the target made absorbing, P = I + Q/Λ stepped on the rest, the steps'
 * survivals weighted by Poisson(Λt). Null when more than `maxSteps` steps would be needed
 * (a chain whose passage takes far longer than its fastest rate is affordable only by its mean).
 */
export function passageProbability(
  q: Generator,
  target: Target,
  from: number,
  timesS: readonly number[],
  maxExitRate: number,
  maxSteps = 200_000,
): (number | null)[] {
  const rate = maxExitRate * 1.02;
  const w = q.width;
  const inTarget = (i: number): boolean => {
    const n = Math.floor(i / w);
    return 'below' in target ? n < target.below : n >= target.atLeast;
  };
  if (inTarget(from)) return timesS.map(() => 1);
  const horizon = Math.max(0, ...timesS) * rate;
  const steps = Math.ceil(horizon + 8 * Math.sqrt(horizon) + 20);
  if (steps > maxSteps) return timesS.map(() => null);
  let p = new Float64Array(q.size);
  p[from] = 1;
  const survival = new Float64Array(steps + 1);
  survival[0] = 1;
  for (let k = 1; k <= steps; k++) {
    const nxt = new Float64Array(q.size);
    let alive = 0;
    for (let i = 0; i < q.size; i++) {
      const pi = p[i]!;
      if (pi === 0) continue;
      for (let kk = q.rowStart[i]!; kk < q.rowStart[i + 1]!; kk++) {
        const j = q.cols[kk]!;
        const v = pi * (j === i ? 1 + q.vals[kk]! / rate : q.vals[kk]! / rate);
        if (!inTarget(j)) nxt[j]! += v;
      }
    }
    for (let i = 0; i < q.size; i++) alive += nxt[i]!;
    survival[k] = alive;
    p = nxt;
  }
  return timesS.map((t) => {
    const lt = rate * t;
    if (lt === 0) return 0;
    let logW = -lt;
    let surv = 0;
    for (let k = 0; k <= steps; k++) {
      if (k > 0) logW += Math.log(lt) - Math.log(k);
      if (logW > -745) surv += Math.exp(logW) * survival[k]!;
    }
    return Math.min(1, Math.max(0, 1 - surv));
  });
}
