/**
 * Counts over a sliding time window, kept as a ring of `slices` equal slices: memory
 * and cost per call are constant, and a count leaves the window within one slice
 * (windowMs / slices) of its age reaching windowMs. Time comes from the caller.
 */
export class SlidingCounts {
  private readonly sliceMs: number;
  private readonly a: Float64Array;
  private readonly b: Float64Array;
  private readonly sliceOf: Float64Array;
  private sumA = 0;
  private sumB = 0;

  constructor(
    readonly windowMs: number,
    readonly slices = 10,
  ) {
    if (!(windowMs > 0) || !(slices >= 1)) throw new RangeError('window and slices must be positive');
    this.sliceMs = windowMs / slices;
    this.a = new Float64Array(slices);
    this.b = new Float64Array(slices);
    this.sliceOf = new Float64Array(slices).fill(-1);
  }

  /** Adds to the two counters at `nowMs` (e.g. requests and accepts, or total and failures). */
  add(nowMs: number, da: number, db: number): void {
    const i = this.slot(nowMs);
    this.a[i]! += da;
    this.b[i]! += db;
    this.sumA += da;
    this.sumB += db;
  }

  /** The two counters over the window ending at `nowMs`. */
  totals(nowMs: number): { a: number; b: number } {
    this.expire(nowMs);
    return { a: this.sumA, b: this.sumB };
  }

  reset(): void {
    this.a.fill(0);
    this.b.fill(0);
    this.sliceOf.fill(-1);
    this.sumA = 0;
    this.sumB = 0;
  }

  private slot(nowMs: number): number {
    this.expire(nowMs);
    const s = Math.floor(nowMs / this.sliceMs);
    const i = s % this.slices;
    if (this.sliceOf[i] !== s) {
      this.sliceOf[i] = s;
      this.a[i] = 0;
      this.b[i] = 0;
    }
    return i;
  }

  /** Drops slices older than the window. */
  private expire(nowMs: number): void {
    const cur = Math.floor(nowMs / this.sliceMs);
    for (let i = 0; i < this.slices; i++) {
      const s = this.sliceOf[i]!;
      if (s >= 0 && s <= cur - this.slices) {
        this.sumA -= this.a[i]!;
        this.sumB -= this.b[i]!;
        this.a[i] = 0;
        this.b[i] = 0;
        this.sliceOf[i] = -1;
      }
    }
  }
}
