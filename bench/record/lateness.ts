/**
 * Each origin's schedule lag, by origin id: how long after its intended time the
 * generator handed its first attempt to the client (DESIGN.md §2, validity check 4).
 * The lateness replay (orchestrator/run/replay.ts) sends each origin of the run's
 * simulated twin this much late. Four bytes an origin, in a typed array that doubles as
 * it fills: no allocation per request.
 *
 * NaN: no first attempt was recorded (refused inside the client, or never reached);
 * Infinity: the generator gave the origin up (`unsent`).
 */
export class LatenessLog {
  private lags = new Float32Array(4096).fill(Number.NaN);
  private length = 0;

  /** Origin `id`'s first attempt left `lagMs` after its intended time. */
  sent(id: number, lagMs: number): void {
    this.at(id);
    this.lags[id] = lagMs > 0 ? lagMs : 0;
  }

  /** Origin `id` was never sent: the generator fell too far behind. */
  unsent(id: number): void {
    this.at(id);
    this.lags[id] = Number.POSITIVE_INFINITY;
  }

  /** The lags of origins 0 … highest id recorded (a copy). */
  values(): Float32Array {
    return this.lags.slice(0, this.length);
  }

  private at(id: number): void {
    if (id >= this.lags.length) {
      let n = this.lags.length * 2;
      while (n <= id) n *= 2;
      const grown = new Float32Array(n).fill(Number.NaN);
      grown.set(this.lags);
      this.lags = grown;
    }
    if (id >= this.length) this.length = id + 1;
  }
}
