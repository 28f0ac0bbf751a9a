/**
 * The k-th smallest of many numbers without sorting them all: Sen's slope wants the median
 * of n(n−1)/2 pairwise slopes and two more of their order statistics, not the sorted 125,000
 * of a 500 s window (sorting them was most of a run's analysis). Each `at(k)` returns exactly
 * what `values.sort()[k]` holds, −0 before +0 included, rearranging `values` in place
 * (quickselect with a three-way partition, so long runs of equal slopes cost one pass).
 * Positions already selected split the array, so later calls only search between them.
 */
export class OrderStatistics {
  /**
   * Runs of positions whose values are final, [from[i], to[i]] (equal values): everything
   * before a run is no larger, everything after it no smaller. Each partition leaves one.
   */
  private readonly from: number[] = [];
  private readonly to: number[] = [];
  /** How many values sort before +0 (negatives and −0s), once counted. */
  private belowZero = -1;
  private seed = 0x9e3779b9;

  constructor(private readonly values: Float64Array) {}

  get length(): number {
    return this.values.length;
  }

  /** The value at index `k` (0-based) of the values in ascending order. */
  at(k: number): number {
    const a = this.values;
    let lo = 0;
    let hi = a.length - 1;
    let known = false;
    for (let r = 0; r < this.from.length; r++) {
      const f = this.from[r]!;
      const t = this.to[r]!;
      if (f <= k && k <= t) known = true;
      else if (t < k && t + 1 > lo) lo = t + 1;
      else if (f > k && f - 1 < hi) hi = f - 1;
    }
    if (!known) this.select(k, lo, hi);
    const v = a[k]!;
    return v === 0 ? this.signedZero(k) : v;
  }

  /**
   * Puts the k-th smallest of a[lo..hi] at k, the smaller ones before it and the larger after
   * (the range lies between final runs), keeping each partition's run of pivots for later calls.
   */
  private select(k: number, lo: number, hi: number): void {
    const a = this.values;
    // A bad run of pivots (quadratic) is all but impossible with random ones; past this many
    // rounds the range is sorted instead, which puts every position where sort() would.
    let rounds = 2 * Math.log2(hi - lo + 2) + 16;
    while (hi > lo) {
      if (--rounds < 0) {
        a.subarray(lo, hi + 1).sort();
        this.from.push(lo);
        this.to.push(hi);
        return;
      }
      const pivot = a[lo + this.random(hi - lo + 1)]!;
      // [lo, lt) < pivot, [lt, gt] = pivot, (gt, hi] > pivot.
      let lt = lo;
      let gt = hi;
      let i = lo;
      while (i <= gt) {
        const v = a[i]!;
        if (v < pivot) {
          a[i++] = a[lt]!;
          a[lt++] = v;
        } else if (v > pivot) {
          a[i] = a[gt]!;
          a[gt--] = v;
        } else i++;
      }
      this.from.push(lt);
      this.to.push(gt);
      if (k < lt) hi = lt - 1;
      else if (k > gt) lo = gt + 1;
      else return;
    }
    // One value left: final.
    this.from.push(lo);
    this.to.push(lo);
  }

  /**
   * −0 or +0 for a zero at k: the partitions take them as equal, sort() puts −0 first. The
   * zeros start after the negatives, the −0s first.
   */
  private signedZero(k: number): number {
    if (this.belowZero < 0) {
      const a = this.values;
      let below = 0;
      for (let i = 0; i < a.length; i++) {
        const v = a[i]!;
        if (v < 0 || (v === 0 && 1 / v < 0)) below++;
      }
      this.belowZero = below;
    }
    return k < this.belowZero ? -0 : 0;
  }

  /** A deterministic pseudo-random index in [0, n) (xorshift32): the same run, the same work. */
  private random(n: number): number {
    let x = this.seed;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.seed = x >>> 0;
    return this.seed % n;
  }
}
