import {
  createLatencyHistogram,
  recordMs,
  summarize,
  type LatencyHistogram,
  type LatencySummary,
} from './histogram.js';

/** A SuccessLog's columns, one element per success (ttftMs only once a stream was logged). */
export interface SuccessColumns {
  readonly endMs: Float64Array;
  readonly responseMs: Float64Array;
  readonly cls: Uint8Array;
  readonly ttftMs?: Float64Array;
}

/** One percentile of a window with its sample count (null with no samples). */
export interface WindowPercentile {
  readonly samples: number;
  readonly value: number | null;
}

/**
 * Every successful origin's completion time, response time, request class and (for a
 * streamed answer) client-side time to first token, from a point of the run on, in
 * growable typed arrays (17 bytes a success, 8 more once a stream was logged; no object
 * per request). It answers the latency of windows that are only known after the run
 * (from the recovery point to the end; a step of a step test; one request class in a
 * window) exactly, by completion time like the Recorder's fixed windows: a window's
 * samples are recorded into a fresh HdrHistogram when it is asked for, not on the hot path.
 */
export class SuccessLog {
  private endMs = new Float64Array(1024);
  private responseMs = new Float64Array(1024);
  private cls = new Uint8Array(1024);
  /** TTFT per success, NaN for an answer that was not streamed; allocated at the first stream. */
  private ttftMs: Float64Array | undefined;
  private n = 0;

  /**
   * `cls`: the request class's index (0..254), or -1 without a workload mix; `ttftMs`:
   * the successful attempt's time to first token, NaN when the answer was not a stream.
   */
  push(endMs: number, responseMs: number, cls: number, ttftMs = NaN): void {
    if (this.n === this.endMs.length) this.grow();
    this.endMs[this.n] = endMs;
    this.responseMs[this.n] = responseMs;
    this.cls[this.n] = cls < 0 ? 255 : cls;
    if (ttftMs === ttftMs) {
      if (!this.ttftMs) this.ttftMs = new Float64Array(this.endMs.length).fill(NaN);
      this.ttftMs[this.n] = ttftMs;
    } else if (this.ttftMs) this.ttftMs[this.n] = NaN;
    this.n++;
  }

  get size(): number {
    return this.n;
  }

  /** Its columns, trimmed to the successes logged (views, not copies): what a run's record stores. */
  columns(): SuccessColumns {
    const n = this.n;
    return {
      endMs: this.endMs.subarray(0, n),
      responseMs: this.responseMs.subarray(0, n),
      cls: this.cls.subarray(0, n),
      ...(this.ttftMs ? { ttftMs: this.ttftMs.subarray(0, n) } : {}),
    };
  }

  /** The log whose columns these are (a run's record read back). */
  static fromColumns(c: SuccessColumns): SuccessLog {
    const log = new SuccessLog();
    log.endMs = Float64Array.from(c.endMs);
    log.responseMs = Float64Array.from(c.responseMs);
    log.cls = Uint8Array.from(c.cls);
    if (c.ttftMs) log.ttftMs = Float64Array.from(c.ttftMs);
    log.n = c.endMs.length;
    // An empty log still needs room to grow by doubling.
    if (log.n === 0) return new SuccessLog();
    return log;
  }

  /** Response times of the successes that completed in [fromMs, toMs), of one class when `cls` is given. */
  latency(fromMs: number, toMs: number, cls?: number): LatencySummary {
    return summarize(this.histogram(this.responseMs, fromMs, toMs, cls));
  }

  /**
   * Percentile `p` of the response times (`of: 'response'`) or of the times to first
   * token of the streamed ones (`of: 'ttft'`) of the successes that completed in
   * [fromMs, toMs), of one class when `cls` is given; nearest rank at the histogram's
   * resolution, as `latency`.
   */
  percentile(
    of: 'response' | 'ttft',
    p: number,
    fromMs: number,
    toMs: number,
    cls?: number,
  ): WindowPercentile {
    const col = of === 'response' ? this.responseMs : this.ttftMs;
    if (!col) return { samples: 0, value: null };
    const h = this.histogram(col, fromMs, toMs, cls);
    const n = h.totalCount;
    return { samples: n, value: n === 0 ? null : Math.round(h.getValueAtPercentile(p)) / 1000 };
  }

  private histogram(
    col: Float64Array,
    fromMs: number,
    toMs: number,
    cls: number | undefined,
  ): LatencyHistogram {
    const h = createLatencyHistogram();
    for (let i = 0; i < this.n; i++) {
      const t = this.endMs[i]!;
      if (t < fromMs || t >= toMs) continue;
      if (cls !== undefined && this.cls[i] !== cls) continue;
      const v = col[i]!;
      if (v === v) recordMs(h, v);
    }
    return h;
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
    if (this.ttftMs) {
      const f = new Float64Array(size).fill(NaN);
      f.set(this.ttftMs);
      this.ttftMs = f;
    }
  }
}
