/**
 * Small dense blocks (row-major Float64Array, w × w) for the level solvers: an LU factorisation
 * with partial pivoting and the few products they need. The blocks are one level of the chain
 * (the orbit's states, tens to hundreds), so dense O(w³) work per level is the cheap part.
 */
export class Lu {
  private readonly a: Float64Array;
  private readonly piv: Int32Array;
  constructor(
    m: Float64Array,
    readonly n: number,
  ) {
    const a = Float64Array.from(m);
    const piv = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      let p = k;
      let best = Math.abs(a[k * n + k]!);
      for (let i = k + 1; i < n; i++) {
        const v = Math.abs(a[i * n + k]!);
        if (v > best) {
          best = v;
          p = i;
        }
      }
      if (best === 0)
        throw new RangeError('singular block: the chain has a state that cannot leave its level');
      piv[k] = p;
      if (p !== k)
        for (let j = 0; j < n; j++) {
          const t = a[k * n + j]!;
          a[k * n + j] = a[p * n + j]!;
          a[p * n + j] = t;
        }
      const d = a[k * n + k]!;
      for (let i = k + 1; i < n; i++) {
        const f = (a[i * n + k]! /= d);
        if (f === 0) continue;
        for (let j = k + 1; j < n; j++) a[i * n + j]! -= f * a[k * n + j]!;
      }
    }
    this.a = a;
    this.piv = piv;
  }

  /** Solves A x = b in place (b becomes x). */
  solve(b: Float64Array, offset = 0): void {
    const { a, n, piv } = this;
    for (let k = 0; k < n; k++) {
      const p = piv[k]!;
      if (p !== k) {
        const t = b[offset + k]!;
        b[offset + k] = b[offset + p]!;
        b[offset + p] = t;
      }
    }
    for (let i = 0; i < n; i++) {
      let s = b[offset + i]!;
      for (let j = 0; j < i; j++) s -= a[i * n + j]! * b[offset + j]!;
      b[offset + i] = s;
    }
    for (let i = n - 1; i >= 0; i--) {
      let s = b[offset + i]!;
      for (let j = i + 1; j < n; j++) s -= a[i * n + j]! * b[offset + j]!;
      b[offset + i] = s / a[i * n + i]!;
    }
  }

  /** Solves x A = b for a row vector x, in place (Aᵀ xᵀ = bᵀ). */
  solveRow(b: Float64Array): void {
    const { a, n, piv } = this;
    // A = P⁻¹ L U, so x A = b is (x P⁻¹) L U = b: first y U = b, then z L = y, then x = z P.
    for (let j = 0; j < n; j++) {
      let s = b[j]!;
      for (let i = 0; i < j; i++) s -= b[i]! * a[i * n + j]!;
      b[j] = s / a[j * n + j]!;
    }
    for (let j = n - 1; j >= 0; j--) {
      let s = b[j]!;
      for (let i = j + 1; i < n; i++) s -= b[i]! * a[i * n + j]!;
      b[j] = s;
    }
    for (let k = n - 1; k >= 0; k--) {
      const p = piv[k]!;
      if (p !== k) {
        const t = b[k]!;
        b[k] = b[p]!;
        b[p] = t;
      }
    }
  }

  /** A⁻¹ B for a w × w block B (column by column). */
  solveMatrix(bm: Float64Array): Float64Array {
    const n = this.n;
    const out = new Float64Array(n * n);
    const col = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      for (let i = 0; i < n; i++) col[i] = bm[i * n + j]!;
      this.solve(col);
      for (let i = 0; i < n; i++) out[i * n + j] = col[i]!;
    }
    return out;
  }

  /** B A⁻¹ for a w × w block B (row by row). */
  solveMatrixRight(bm: Float64Array): Float64Array {
    const n = this.n;
    const out = new Float64Array(n * n);
    const row = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      row.set(bm.subarray(i * n, i * n + n));
      this.solveRow(row);
      out.set(row, i * n);
    }
    return out;
  }
}

/** C += A B for w × w blocks (skipping A's zeros: the chain's blocks are mostly bands). */
export function addProduct(c: Float64Array, a: Float64Array, b: Float64Array, n: number): void {
  for (let i = 0; i < n; i++)
    for (let k = 0; k < n; k++) {
      const f = a[i * n + k]!;
      if (f === 0) continue;
      for (let j = 0; j < n; j++) c[i * n + j]! += f * b[k * n + j]!;
    }
}
