import { createLatencyHistogram, recordMs, summarize, type LatencySummary } from './histogram.js';

/**
 * Every successful origin's completion time, response time and request class, from a
 * point of the run on, in growable typed arrays (17 bytes a success, no object per
 * request). It answers the latency of windows that are only known after the run (from
 * the recovery point to the end; a step of a step test; one request class in a window)
 * exactly, by completion time like the Recorder's fixed windows: a window's samples are
 * recorded into a fresh HdrHistogram when it is asked for, not on the hot path.
 */
export class SuccessLog {
  private endMs = new Float64Array(1024);
  private responseMs = new Float64Array(1024);
  private cls = new Uint8Array(1024);
  private n = 0;

  /** `cls`: the request class's index (0..254), or -1 without a workload mix. */
  push(endMs: number, responseMs: number, cls: number): void {
    if (this.n === this.endMs.length) this.grow();
    this.endMs[this.n] = endMs;
    this.responseMs[this.n] = responseMs;
    this.cls[this.n] = cls < 0 ? 255 : cls;
    this.n++;
  }

  get size(): number {
    return this.n;
  }

  /** Response times of the successes that completed in [fromMs, toMs), of one class when `cls` is given. */
  latency(fromMs: number, toMs: number, cls?: number): LatencySummary {
    const h = createLatencyHistogram();
    for (let i = 0; i < this.n; i++) {
      const t = this.endMs[i]!;
      if (t < fromMs || t >= toMs) continue;
      if (cls !== undefined && this.cls[i] !== cls) continue;
      recordMs(h, this.responseMs[i]!);
    }
    return summarize(h);
  }

  private grow(): void {
    const size = this.endMs.length * 2;
    const e = new Float64Array(size);
    e.set(this.endMs);
    const r = new Float64Array(size);
    r.set(this.responseMs);
    const c = new Uint8Array(size);
    c.set(this.cls);
    this.endMs = e;
    this.responseMs = r;
    this.cls = c;
  }
}
