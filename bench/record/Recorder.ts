import type { Attempt, AttemptResult, FailureKind, Origin, OutcomeKind } from '../outcome.js';
import { FAILURE_KINDS } from '../outcome.js';
import type { BreakerState, PolicyEvent } from '../policy/events.js';
import type { EventSink } from './eventLog.js';
import { nullSink } from './eventLog.js';
import {
  createLatencyHistogram,
  recordMs,
  summarize,
  type LatencyHistogram,
  type LatencySummary,
} from './histogram.js';
import { SuccessLog } from './successLog.js';
import { round } from '../../foundation/round.js';

/** A named interval of the run (warm-up, baseline, trigger, after trigger), ms since run start. */
export interface RecordWindow {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** Sends later than this after their intended time count as late sends (DESIGN.md §2). */
export const LATE_SEND_MS = 1;

/** Per-bucket series (one element per second by default). Latency figures are null where a bucket had no success. */
export interface BucketSeries {
  /** Origin requests by intended time. */
  readonly offered: number[];
  /** Attempts by actual send time. */
  readonly attempts: number[];
  /** Origins the client saw succeed within their deadline, by completion time. */
  readonly goodput: number[];
  /** Failed origins by completion time, one series per kind. */
  readonly failures: Record<FailureKind, number[]>;
  /** First attempts sent more than LATE_SEND_MS after their intended time, by intended time. */
  readonly lateSends: number[];
  /** First attempts by actual send time (or by the time the breaker or throttle refused them): the offered load the generator achieved (run validity). */
  readonly firstSends: number[];
  readonly responseP50: (number | null)[];
  readonly responseP99: (number | null)[];
  readonly responseMax: (number | null)[];
  /** Origins in flight at the end of each bucket. */
  readonly inFlight: number[];
  /** Hedge attempts sent, by send time. */
  readonly hedges: number[];
  /** Attempts the client cancelled (hedge losers, abandoned origins), by end time. */
  readonly cancelledAttempts: number[];
  /** Retries the budget refused, by decision time. */
  readonly retriesDeniedBudget: number[];
  /** Attempts refused locally by the breaker / by the throttle, by time. */
  readonly rejectedBreaker: number[];
  readonly rejectedThrottle: number[];
  /**
   * The breaker state series: the fraction of each bucket the clients' breakers spent
   * open / half-open, averaged over the K clients (0..1), and the transitions to open.
   */
  readonly breakerOpen: number[];
  readonly breakerHalfOpen: number[];
  readonly breakerOpens: number[];
  /** Attempts that waited inside the client for a connection, by send time. */
  readonly clientWaits: number[];
}

/** Which client policies the run used (their counters are null when absent). */
export interface PolicyPresence {
  readonly clients: number;
  readonly budget: boolean;
  readonly breaker: boolean;
  readonly throttle: boolean;
  readonly hedge: boolean;
  readonly abandon: boolean;
}

/** Per-policy counters over the whole run. */
export interface PolicyCounters {
  /** Retries scheduled (each then sent, unless the breaker or throttle refused it). */
  retries: number;
  retriesDeniedBudget: number;
  retriesCutByDeadline: number;
  retriesExhausted: number;
  breakerOpens: number;
  breakerRejected: number;
  throttled: number;
  hedgesSent: number;
  hedgesWon: number;
  hedgesDenied: number;
  cancelledAttempts: number;
}

export interface WindowLatency {
  readonly response: LatencySummary;
  readonly service: LatencySummary;
}

/** One request class's per-bucket counts (only when the workload declares a mix). */
export interface ClassSeries {
  /** Origins of the class by intended time. */
  readonly offered: number[];
  /** Its successes within the deadline, by completion time. */
  readonly goodput: number[];
  /** Its failed origins (any kind), by completion time. */
  readonly failed: number[];
}

export interface Recorded {
  readonly bucketMs: number;
  readonly buckets: number;
  readonly series: BucketSeries;
  readonly windows: Record<string, WindowLatency>;
  readonly overall: WindowLatency;
  readonly scheduleLag: LatencySummary;
  /** How long attempts waited inside the client for a connection (only those that waited). */
  readonly clientWait: LatencySummary;
  readonly totals: {
    readonly offered: number;
    readonly recorded: number;
    readonly attempts: number;
    readonly lateSends: number;
    readonly outcomes: Record<OutcomeKind, number>;
    /** Attempts by how they ended (`cancelled` included). */
    readonly attemptOutcomes: Record<OutcomeKind, number>;
    readonly policies: PolicyCounters;
    /** When the last first attempt left (ms since start): the end of the sending phase. */
    readonly lastFirstSendMs: number;
  };
  readonly policies: PolicyPresence;
  /** Per request class, by name (only when the Recorder was given the mix's classes). */
  readonly classes?: Readonly<Record<string, ClassSeries>>;
  /** Every success from `retainFromMs` on, for latency over windows decided after the run (and per class). */
  readonly successes?: SuccessLog;
  /** The index of each class name in `successes` (the mix's order). */
  readonly classIndex?: Readonly<Record<string, number>>;
}

/**
 * One complete second (bucket) as timeseries.csv has it, for the status line: the same
 * series, read once nothing can change them any more (Recorder.lastCompleteBucket).
 */
export interface BucketFigures {
  /** The bucket's index (its t_s in seconds with 1 s buckets). */
  readonly bucket: number;
  readonly offered: number;
  readonly attempts: number;
  readonly goodput: number;
  /** attempts / offered; null when nothing was offered in it. */
  readonly amplification: number | null;
  /** p99 response time of the successes that completed in it; null when there was none. */
  readonly p99Ms: number | null;
  /** Origins in flight at its end. */
  readonly inFlight: number;
}

/**
 * The Recorder: cheap `offered/attempt/outcome` calls on the hot path (bucket counters,
 * one histogram record, one queued event line), and one `close()` that computes the
 * rest. Memory is per bucket and per window, not per request.
 *
 * Latency distributions hold successful origins only (response time = completion −
 * intended time) and successful attempts only (service time = completion − actual
 * send); failures are counted by kind.
 */
export class Recorder {
  private readonly bucketMs: number;
  private readonly windows: {
    def: RecordWindow;
    lat: { response: LatencyHistogram; service: LatencyHistogram };
  }[];
  private readonly overall = { response: createLatencyHistogram(), service: createLatencyHistogram() };
  private readonly lag = createLatencyHistogram();
  private readonly wait = createLatencyHistogram();
  private readonly s: BucketSeries;
  private readonly outcomes: Record<OutcomeKind, number>;
  private readonly attemptOutcomes: Record<OutcomeKind, number>;
  private readonly counters: PolicyCounters = {
    retries: 0,
    retriesDeniedBudget: 0,
    retriesCutByDeadline: 0,
    retriesExhausted: 0,
    breakerOpens: 0,
    breakerRejected: 0,
    throttled: 0,
    hedgesSent: 0,
    hedgesWon: 0,
    hedgesDenied: 0,
    cancelledAttempts: 0,
  };
  private readonly presence: PolicyPresence;
  // Breaker state per client and since when, to integrate time spent open per bucket.
  private readonly breakerState: { state: BreakerState; sinceMs: number }[] = [];
  private lastTickMs = 0;
  private offeredTotal = 0;
  private recordedTotal = 0;
  private attemptsTotal = 0;
  private lateTotal = 0;
  private inFlight = 0;
  /** The latest intended time offered: a bucket's offered count is final once an origin after it was. */
  private maxIntendedMs = Number.NEGATIVE_INFINITY;
  /** Attempts started but not yet recorded, by the bucket they started in (attemptStarted). */
  private readonly pending = new Map<number, number>();
  // Per-bucket response percentiles: one histogram for the bucket being filled.
  private curBucket = 0;
  private readonly curHist = createLatencyHistogram();

  private readonly onBucketClosed: ((bucket: number, response: LatencyHistogram) => void) | undefined;
  private lastFirstSendMs = 0;
  /** False with no event log: the hot path then builds no event objects at all. */
  private readonly logging: boolean;
  /** Per-class counts, indexed like the mix (undefined without a mix). */
  private readonly classNames: readonly string[] | undefined;
  private readonly perClass: ClassSeries[] | undefined;
  private readonly successLog: SuccessLog | undefined;
  private readonly retainFromMs: number;

  constructor(
    opts: {
      windows?: readonly RecordWindow[];
      bucketMs?: number;
      policies?: PolicyPresence;
      /** Sees each bucket's response-time histogram (µs) before it is reset, e.g. for an HdrHistogram interval log. */
      onBucketClosed?: (bucket: number, response: LatencyHistogram) => void;
      /**
       * The workload mix's class names, by class index: per-class counts per bucket and
       * per-class latency are kept (a few array bumps a request). Omit without a mix.
       */
      classes?: readonly string[];
      /** Keep every success that completes from this time on (SuccessLog), for windows decided after the run. */
      retainFromMs?: number;
    },
    private readonly events: EventSink = nullSink,
  ) {
    this.bucketMs = opts.bucketMs ?? 1000;
    this.onBucketClosed = opts.onBucketClosed;
    this.logging = events !== nullSink;
    this.classNames = opts.classes && opts.classes.length > 0 ? opts.classes : undefined;
    this.perClass = this.classNames?.map(() => ({ offered: [], goodput: [], failed: [] }));
    this.retainFromMs = opts.retainFromMs ?? Number.POSITIVE_INFINITY;
    this.successLog = opts.retainFromMs !== undefined ? new SuccessLog() : undefined;
    this.presence = opts.policies ?? {
      clients: 1,
      budget: false,
      breaker: false,
      throttle: false,
      hedge: false,
      abandon: false,
    };
    for (let i = 0; i < this.presence.clients; i++) this.breakerState.push({ state: 'closed', sinceMs: 0 });
    this.windows = (opts.windows ?? []).map((def) => ({
      def,
      lat: { response: createLatencyHistogram(), service: createLatencyHistogram() },
    }));
    const failures = {} as Record<FailureKind, number[]>;
    for (const k of FAILURE_KINDS) failures[k] = [];
    this.s = {
      offered: [],
      attempts: [],
      goodput: [],
      failures,
      lateSends: [],
      firstSends: [],
      responseP50: [],
      responseP99: [],
      responseMax: [],
      inFlight: [],
      hedges: [],
      cancelledAttempts: [],
      retriesDeniedBudget: [],
      rejectedBreaker: [],
      rejectedThrottle: [],
      breakerOpen: [],
      breakerHalfOpen: [],
      breakerOpens: [],
      clientWaits: [],
    };
    this.outcomes = { ok: 0 } as Record<OutcomeKind, number>;
    for (const k of FAILURE_KINDS) this.outcomes[k] = 0;
    this.attemptOutcomes = { ...this.outcomes };
  }

  private bucket(ms: number): number {
    return ms <= 0 ? 0 : Math.floor(ms / this.bucketMs);
  }

  /** An origin request was created at its intended time. */
  offered(o: Origin): void {
    bump(this.s.offered, this.bucket(o.intendedMs));
    if (this.perClass && o.request) {
      const c = this.perClass[o.request.cls];
      if (c) bump(c.offered, this.bucket(o.intendedMs));
    }
    this.offeredTotal++;
    this.inFlight++;
    if (o.intendedMs > this.maxIntendedMs) this.maxIntendedMs = o.intendedMs;
  }

  /**
   * An attempt is about to be sent (at `nowMs` or later); returns the token to give
   * `attempt()` when it ends. Until then the buckets from this one on may still gain an
   * attempt (attempts are counted by send time, but recorded when they end), so they
   * are not complete (lastCompleteBucket).
   */
  attemptStarted(nowMs: number): number {
    const b = this.bucket(nowMs);
    this.pending.set(b, (this.pending.get(b) ?? 0) + 1);
    return b;
  }

  /**
   * One attempt finished (any kind). Called once per attempt, in completion order;
   * `started` is attemptStarted's token, when it was called.
   */
  attempt(a: Attempt, r: AttemptResult, started?: number): void {
    if (started !== undefined) {
      const n = (this.pending.get(started) ?? 0) - 1;
      if (n > 0) this.pending.set(started, n);
      else this.pending.delete(started);
    }
    bump(this.s.attempts, this.bucket(r.sentMs));
    this.attemptsTotal++;
    this.attemptOutcomes[r.kind]++;
    if (a.hedge) {
      bump(this.s.hedges, this.bucket(r.sentMs));
      this.counters.hedgesSent++;
    }
    if (r.kind === 'cancelled') {
      bump(this.s.cancelledAttempts, this.bucket(r.endMs));
      this.counters.cancelledAttempts++;
    }
    if (a.number === 1) {
      // When the generator handed it to the client: a wait for a connection under a
      // declared cap is the client model's, not the generator's (validity check 4).
      bump(this.s.firstSends, this.bucket(r.sentMs - (r.clientWaitMs ?? 0)));
      if (r.sentMs > this.lastFirstSendMs) this.lastFirstSendMs = r.sentMs;
      // The generator's own lag: a wait for a connection inside the client is reported
      // separately (clientWait), so late sends say whether the generator kept its schedule.
      const lagMs = r.sentMs - (r.clientWaitMs ?? 0) - a.origin.intendedMs;
      recordMs(this.lag, lagMs > 0 ? lagMs : 0);
      if (lagMs > LATE_SEND_MS) {
        bump(this.s.lateSends, this.bucket(a.origin.intendedMs));
        this.lateTotal++;
      }
    }
    if (r.clientWaitMs) {
      recordMs(this.wait, r.clientWaitMs);
      bump(this.s.clientWaits, this.bucket(r.sentMs));
    }
    if (r.kind === 'ok') {
      const serviceMs = r.endMs - r.sentMs;
      recordMs(this.overall.service, serviceMs);
      for (const w of this.windows)
        if (r.endMs >= w.def.startMs && r.endMs < w.def.endMs) recordMs(w.lat.service, serviceMs);
    }
    if (this.logging)
      this.events.write({
        e: 'attempt',
        origin: a.origin.id,
        ...(a.origin.request ? { cls: a.origin.request.cls } : {}),
        n: a.number,
        intendedMs: round(a.origin.intendedMs, 3),
        sentMs: round(r.sentMs, 3),
        endMs: round(r.endMs, 3),
        kind: r.kind,
        status: r.status,
        ...(r.clientWaitMs ? { clientWaitMs: round(r.clientWaitMs, 3) } : {}),
        ...(a.hedge ? { hedge: true } : {}),
        ...(r.stream
          ? {
              tokens: r.stream.tokens,
              ...(r.stream.ttftMs !== undefined ? { ttftMs: round(r.stream.ttftMs, 3) } : {}),
              ...(r.stream.itlMs !== undefined ? { itlMs: round(r.stream.itlMs, 3) } : {}),
            }
          : {}),
      });
  }

  /**
   * What a client policy decided (subscribed through PolicyEnv.emit). Counts go to the
   * run's counters and per-bucket series; locally refused attempts and breaker
   * transitions also get an events.ndjson line (so every attempt number is accounted for).
   */
  policy(e: PolicyEvent): void {
    const c = this.counters;
    switch (e.type) {
      case 'retry':
        c.retries++;
        return;
      case 'retry-denied':
        if (e.reason === 'budget') {
          c.retriesDeniedBudget++;
          bump(this.s.retriesDeniedBudget, this.bucket(e.atMs));
        } else if (e.reason === 'deadline') c.retriesCutByDeadline++;
        else c.retriesExhausted++;
        return;
      case 'rejected':
        // A first attempt the breaker or the throttle refused was still offered on
        // schedule: the generator did its part (validity check 4 reads firstSends).
        if (e.number === 1) bump(this.s.firstSends, this.bucket(e.atMs));
        if (e.by === 'breaker') {
          c.breakerRejected++;
          bump(this.s.rejectedBreaker, this.bucket(e.atMs));
        } else {
          c.throttled++;
          bump(this.s.rejectedThrottle, this.bucket(e.atMs));
        }
        if (this.logging)
          this.events.write({
            e: 'rejected',
            origin: e.origin,
            n: e.number,
            by: e.by,
            atMs: round(e.atMs, 3),
            ...(this.presence.clients > 1 ? { client: e.client } : {}),
          });
        return;
      case 'breaker': {
        if (e.to === 'open') {
          c.breakerOpens++;
          bump(this.s.breakerOpens, this.bucket(e.atMs));
        }
        const st = this.breakerState[e.client];
        if (st) {
          this.accrueBreaker(st, e.atMs);
          st.state = e.to;
        }
        if (this.logging)
          this.events.write({
            e: 'breaker',
            client: e.client,
            from: e.from,
            to: e.to,
            atMs: round(e.atMs, 3),
          });
        return;
      }
      case 'hedge-won':
        c.hedgesWon++;
        return;
      case 'hedge-denied':
        c.hedgesDenied++;
        return;
    }
  }

  /** Adds the time a client's breaker spent in its current state, up to `untilMs`, to the buckets. */
  private accrueBreaker(st: { state: BreakerState; sinceMs: number }, untilMs: number): void {
    const series =
      st.state === 'open'
        ? this.s.breakerOpen
        : st.state === 'half-open'
          ? this.s.breakerHalfOpen
          : undefined;
    let t = st.sinceMs;
    st.sinceMs = Math.max(st.sinceMs, untilMs);
    if (!series) return;
    const share = 1 / (this.presence.clients * this.bucketMs);
    while (t < untilMs) {
      const b = this.bucket(t);
      const end = Math.min(untilMs, (b + 1) * this.bucketMs);
      while (series.length <= b) series.push(0);
      series[b]! += (end - t) * share;
      t = end;
    }
  }

  /**
   * The origin's final outcome. A success after the deadline is `deadline-exceeded`:
   * only the client knows whether it still wanted the answer.
   */
  outcome(o: Origin, r: AttemptResult): void {
    const kind: OutcomeKind = r.kind === 'ok' && r.endMs > o.deadlineMs ? 'deadline-exceeded' : r.kind;
    const b = this.bucket(r.endMs);
    this.recordedTotal++;
    this.inFlight--;
    this.outcomes[kind]++;
    const cls = this.perClass && o.request ? this.perClass[o.request.cls] : undefined;
    if (kind === 'ok') {
      bump(this.s.goodput, b);
      if (cls) bump(cls.goodput, b);
      const responseMs = r.endMs - o.intendedMs;
      if (this.successLog && r.endMs >= this.retainFromMs)
        this.successLog.push(r.endMs, responseMs, cls ? o.request!.cls : -1);
      recordMs(this.overall.response, responseMs);
      for (const w of this.windows)
        if (r.endMs >= w.def.startMs && r.endMs < w.def.endMs) recordMs(w.lat.response, responseMs);
      if (b > this.curBucket) this.rotate(b);
      if (b === this.curBucket) recordMs(this.curHist, responseMs);
    } else {
      bump(this.s.failures[kind], b);
      if (cls) bump(cls.failed, b);
    }
    if (this.logging)
      this.events.write({
        e: 'outcome',
        origin: o.id,
        intendedMs: round(o.intendedMs, 3),
        endMs: round(r.endMs, 3),
        kind,
        attempts: r.attempt,
      });
  }

  /** Closes per-bucket figures up to (not including) bucket `b`. */
  private rotate(b: number): void {
    const h = this.curHist;
    const i = this.curBucket;
    if (h.totalCount > 0) {
      this.onBucketClosed?.(i, h);
      setAt(this.s.responseP50, i, h.getValueAtPercentile(50) / 1000);
      setAt(this.s.responseP99, i, h.getValueAtPercentile(99) / 1000);
      setAt(this.s.responseMax, i, h.maxValue / 1000);
      h.reset();
    }
    this.curBucket = b;
  }

  /**
   * Marks the end of a bucket for the in-flight series (called by the driver once per
   * bucket, at or after its end). A bucket whose end was already marked keeps its value:
   * the status line may have shown it.
   */
  tick(nowMs: number): void {
    const i = this.bucket(nowMs - 1);
    const marked = this.lastTickMs >= (i + 1) * this.bucketMs;
    if (nowMs > this.lastTickMs) this.lastTickMs = nowMs;
    if (marked) return;
    const arr = this.s.inFlight;
    while (arr.length < i) arr.push(arr[arr.length - 1] ?? 0);
    arr[i] = this.inFlight;
  }

  /**
   * The last bucket whose figures can no longer change (−1: none yet): its end has been
   * marked by the driver (tick: its in-flight count is set, and any success or failure
   * completing in it has been recorded), an origin intended after it has been offered
   * (arrivals come in order: its offered count is final), and no attempt that started in
   * it or before is still out (it may still add to the attempts of a bucket up to its
   * own). The status line shows this bucket, so what it prints is what timeseries.csv
   * will say of that second.
   */
  lastCompleteBucket(): number {
    let last =
      Math.min(Math.floor(this.lastTickMs / this.bucketMs), Math.floor(this.maxIntendedMs / this.bucketMs)) -
      1;
    for (const b of this.pending.keys()) if (b <= last) last = b - 1;
    return Number.isFinite(last) ? Math.max(-1, last) : -1;
  }

  /** Bucket `i`'s figures from the series timeseries.csv is written from (see lastCompleteBucket). */
  figures(i: number): BucketFigures {
    const s = this.s;
    const offered = s.offered[i] ?? 0;
    const attempts = s.attempts[i] ?? 0;
    const h = this.curHist;
    const p99Ms =
      i === this.curBucket
        ? h.totalCount > 0
          ? h.getValueAtPercentile(99) / 1000
          : null
        : i < this.curBucket
          ? (s.responseP99[i] ?? null)
          : null;
    return {
      bucket: i,
      offered,
      attempts,
      goodput: s.goodput[i] ?? 0,
      amplification: offered > 0 ? attempts / offered : null,
      p99Ms,
      inFlight: s.inFlight[i] ?? 0,
    };
  }

  /** Writes a trigger action (or any other run event) into the event log. */
  note(event: object): void {
    this.events.write(event);
  }

  /**
   * The counts so far, live (not copies; buckets not yet filled may be missing): a step
   * test reads the figures of a finished step while the Recorder goes on.
   */
  peek(): Pick<Recorded, 'bucketMs' | 'series' | 'successes'> {
    return {
      bucketMs: this.bucketMs,
      series: this.s,
      ...(this.successLog ? { successes: this.successLog } : {}),
    };
  }

  close(): Recorded {
    this.rotate(Number.MAX_SAFE_INTEGER);
    for (const st of this.breakerState) this.accrueBreaker(st, this.lastTickMs);
    const s = this.s;
    const counted = [
      s.offered,
      s.attempts,
      s.goodput,
      s.lateSends,
      s.firstSends,
      s.inFlight,
      ...Object.values(s.failures),
      s.hedges,
      s.cancelledAttempts,
      s.retriesDeniedBudget,
      s.rejectedBreaker,
      s.rejectedThrottle,
      s.breakerOpens,
    ];
    let buckets = 0;
    for (const arr of counted) buckets = Math.max(buckets, arr.length);
    for (const arr of [...counted, s.breakerOpen, s.breakerHalfOpen]) fill(arr, buckets, 0);
    // Rounding: a bucket's fraction is a sum of shares; keep it inside [0, 1].
    for (const arr of [s.breakerOpen, s.breakerHalfOpen])
      for (let i = 0; i < arr.length; i++) arr[i] = Math.min(1, round(arr[i]!, 6));
    for (const arr of [s.responseP50, s.responseP99, s.responseMax]) fill(arr, buckets, null);
    for (const c of this.perClass ?? [])
      for (const arr of [c.offered, c.goodput, c.failed]) fill(arr, buckets, 0);
    const windows: Record<string, WindowLatency> = {};
    for (const w of this.windows)
      windows[w.def.name] = { response: summarize(w.lat.response), service: summarize(w.lat.service) };
    return {
      bucketMs: this.bucketMs,
      buckets,
      series: s,
      windows,
      overall: { response: summarize(this.overall.response), service: summarize(this.overall.service) },
      scheduleLag: summarize(this.lag),
      clientWait: summarize(this.wait),
      totals: {
        offered: this.offeredTotal,
        recorded: this.recordedTotal,
        attempts: this.attemptsTotal,
        lateSends: this.lateTotal,
        outcomes: { ...this.outcomes },
        attemptOutcomes: { ...this.attemptOutcomes },
        policies: { ...this.counters },
        lastFirstSendMs: this.lastFirstSendMs,
      },
      policies: this.presence,
      ...(this.classNames && this.perClass
        ? {
            classes: Object.fromEntries(this.classNames.map((n, i) => [n, this.perClass![i]!])),
            classIndex: Object.fromEntries(this.classNames.map((n, i) => [n, i])),
          }
        : {}),
      ...(this.successLog ? { successes: this.successLog } : {}),
    };
  }
}

function bump(arr: number[], i: number): void {
  while (arr.length <= i) arr.push(0);
  arr[i]!++;
}

function setAt<T>(arr: (T | null)[], i: number, v: T): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}

function fill<T>(arr: T[], n: number, v: T): void {
  while (arr.length < n) arr.push(v);
}
