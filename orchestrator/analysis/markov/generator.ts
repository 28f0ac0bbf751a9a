/**
 * A continuous-time Markov chain's generator Q as a sparse matrix in compressed sparse row
 * form (CSR), with its states laid out in levels: state i is on level ⌊i / width⌋, and every
 * transition moves at most one level up or down. The retry chain's level is the queue length,
 * which changes by one job at a time, so Q is block tridiagonal and the solvers in levels.ts
 * eliminate it level by level, exactly, in O(levels × width³) time.
 */
export interface Generator {
  /** Number of states: levels × width. */
  readonly size: number;
  readonly levels: number;
  /** States per level. */
  readonly width: number;
  /** CSR: the entries of row i are cols/vals[rowStart[i] .. rowStart[i+1]); the diagonal is among them. */
  readonly rowStart: Int32Array;
  readonly cols: Int32Array;
  readonly vals: Float64Array;
}

/** Builds a generator from its off-diagonal rates; each row's diagonal is minus the row's sum. */
export class GeneratorBuilder {
  private readonly rows: Map<number, number>[];
  constructor(
    readonly levels: number,
    readonly width: number,
  ) {
    if (!(levels >= 1 && width >= 1)) throw new RangeError(`a chain needs a level and a state per level`);
    this.rows = Array.from({ length: levels * width }, () => new Map<number, number>());
  }

  /** Adds `rate` (per second, > 0 to count) to the transition from → to (rates of one pair add up). */
  add(from: number, to: number, rate: number): void {
    if (!(rate > 0) || from === to) return;
    if (Math.abs(Math.floor(from / this.width) - Math.floor(to / this.width)) > 1)
      throw new RangeError(
        `transition ${from} → ${to} skips a level: the level solvers need a tridiagonal chain`,
      );
    const row = this.rows[from]!;
    row.set(to, (row.get(to) ?? 0) + rate);
  }

  build(): Generator {
    const size = this.rows.length;
    const rowStart = new Int32Array(size + 1);
    let nnz = 0;
    for (let i = 0; i < size; i++) {
      rowStart[i] = nnz;
      nnz += this.rows[i]!.size + 1;
    }
    rowStart[size] = nnz;
    const cols = new Int32Array(nnz);
    const vals = new Float64Array(nnz);
    for (let i = 0; i < size; i++) {
      const entries = [...this.rows[i]!.entries(), [i, 0] as [number, number]].sort((a, b) => a[0] - b[0]);
      let out = 0;
      for (const [, r] of entries) out += r;
      let k = rowStart[i]!;
      for (const [j, r] of entries) {
        cols[k] = j;
        vals[k] = j === i ? -out : r;
        k++;
      }
    }
    return { size, levels: this.levels, width: this.width, rowStart, cols, vals };
  }
}

/** The largest |row sum| of Q (0 for a generator, up to rounding). */
export function maxRowSum(q: Generator): number {
  let worst = 0;
  for (let i = 0; i < q.size; i++) {
    let s = 0;
    for (let k = q.rowStart[i]!; k < q.rowStart[i + 1]!; k++) s += q.vals[k]!;
    worst = Math.max(worst, Math.abs(s));
  }
  return worst;
}

/** The largest exit rate −Q(i,i): the uniformisation rate. */
export function maxExitRate(q: Generator): number {
  let m = 0;
  for (let i = 0; i < q.size; i++)
    for (let k = q.rowStart[i]!; k < q.rowStart[i + 1]!; k++)
      if (q.cols[k] === i) m = Math.max(m, -q.vals[k]!);
  return m;
}

/** Q(i, j), 0 when absent (tests and small checks). */
export function entry(q: Generator, i: number, j: number): number {
  for (let k = q.rowStart[i]!; k < q.rowStart[i + 1]!; k++) if (q.cols[k] === j) return q.vals[k]!;
  return 0;
}
