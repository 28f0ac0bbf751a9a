import type { Attempt, AttemptResult, Origin, OutcomeKind } from '../outcome.js';
import { FAILURE_KINDS } from '../outcome.js';
import type { PolicyEvent } from '../policy/events.js';
import { bucketOf, bump, closeSeries, emptySeries, type BucketSeries, type ClassSeries } from './buckets.js';
import { nullSink, recordingSink, type EventSink, type RecordingSink } from './eventSink.js';
import { policyEvent } from './eventEncoding.js';
import type { LatencyHistogram, LatencySummary } from './histogram.js';
import { Latencies, type RecordWindow, type WindowLatency } from './latencies.js';
import { NO_POLICIES, PolicyAccount, type PolicyCounters, type PolicyPresence } from './policyAccounting.js';
import { SuccessLog } from './successLog.js';
import { LatenessLog } from './lateness.js';

export type { BucketSeries, ClassSeries } from './buckets.js';
export type { RecordWindow, WindowLatency } from './latencies.js';
export type { PolicyCounters, PolicyPresence } from './policyAccounting.js';

/** Sends later than this after their intended time count as late sends (DESIGN.md §2). */
export const LATE_SEND_MS = 1;

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
  /** Each origin's schedule lag by origin id (LatenessLog), when the Recorder was asked to keep it. */
  readonly lateness?: Float32Array;
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
 * rest. Memory is per bucket and per window, not per request. A façade: the series are
 * buckets.ts's, the histograms latencies.ts's, the policy counters policyAccounting.ts's
 * and the event lines eventEncoding.ts's.
 *
 * Latency distributions hold successful origins only (response time = completion −
 * intended time) and successful attempts only (service time = completion − actual
 * send); failures are counted by kind.
 */
export class Recorder {
  private readonly bucketMs: number;
  private readonly s: BucketSeries = emptySeries();
  private readonly latencies: Latencies;
  private readonly policies: PolicyAccount;
  private readonly outcomes: Record<OutcomeKind, number>;
  private readonly attemptOutcomes: Record<OutcomeKind, number>;
  private readonly presence: PolicyPresence;
  private lastTickMs = 0;
  private offeredTotal = 0;
  private recordedTotal = 0;
  private attemptsTotal = 0;
  private lateTotal = 0;
  private inFlight = 0;
  /** The latest intended time offered: a bucket's offered count is final once an origin after it was. */
  private maxIntendedMs = Number.NEGATIVE_INFINITY;
  /**
   * Attempts started but not yet recorded, by the bucket they started in (attemptStarted):
   * a count per bucket (an array bump per attempt, where a Map cost two lookups), and the
   * lowest bucket that may still have one.
   */
  private readonly pending: number[] = [];
  private pendingLow = 0;
  private lastFirstSendMs = 0;
  /** False with no event log: the hot path then builds no event objects at all. */
  private readonly logging: boolean;
  private readonly events: RecordingSink;
  /** Per-class counts, indexed like the mix (undefined without a mix). */
  private readonly classNames: readonly string[] | undefined;
  private readonly perClass: ClassSeries[] | undefined;
  private readonly successLog: SuccessLog | undefined;
  private readonly retainFromMs: number;
  private readonly latenessLog: LatenessLog | undefined;

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
      /** Keep each origin's schedule lag by origin id (Recorded.lateness), for the lateness replay. */
      lateness?: boolean;
    },
    sink: EventSink = nullSink,
  ) {
    this.events = recordingSink(sink);
    this.bucketMs = opts.bucketMs ?? 1000;
    this.logging = sink !== nullSink;
    this.classNames = opts.classes && opts.classes.length > 0 ? opts.classes : undefined;
    this.perClass = this.classNames?.map(() => ({ offered: [], goodput: [], failed: [] }));
    this.retainFromMs = opts.retainFromMs ?? Number.POSITIVE_INFINITY;
    this.successLog = opts.retainFromMs !== undefined ? new SuccessLog() : undefined;
    this.latenessLog = opts.lateness ? new LatenessLog() : undefined;
    this.presence = opts.policies ?? NO_POLICIES;
    this.policies = new PolicyAccount(this.presence, this.s, this.bucketMs);
    this.latencies = new Latencies(opts.windows ?? [], this.s, opts.onBucketClosed);
    this.outcomes = { ok: 0 } as Record<OutcomeKind, number>;
    for (const k of FAILURE_KINDS) this.outcomes[k] = 0;
    this.attemptOutcomes = { ...this.outcomes };
  }

  /** An origin request was created at its intended time. */
  offered(o: Origin): void {
    bump(this.s.offered, bucketOf(o.intendedMs, this.bucketMs));
    if (this.perClass && o.request) {
      const c = this.perClass[o.request.cls];
      if (c) bump(c.offered, bucketOf(o.intendedMs, this.bucketMs));
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
    const b = bucketOf(nowMs, this.bucketMs);
    bump(this.pending, b);
    if (b < this.pendingLow) this.pendingLow = b;
    return b;
  }

  /**
   * One attempt finished (any kind). Called once per attempt, in completion order;
   * `started` is attemptStarted's token, when it was called.
   */
  attempt(a: Attempt, r: AttemptResult, started?: number): void {
    if (started !== undefined) {
      const p = this.pending;
      if (p[started]! > 0) p[started]!--;
    }
    bump(this.s.attempts, bucketOf(r.sentMs, this.bucketMs));
    this.attemptsTotal++;
    this.attemptOutcomes[r.kind]++;
    if (a.hedge) {
      bump(this.s.hedges, bucketOf(r.sentMs, this.bucketMs));
      this.policies.counters.hedgesSent++;
    }
    if (r.kind === 'cancelled') {
      bump(this.s.cancelledAttempts, bucketOf(r.endMs, this.bucketMs));
      this.policies.counters.cancelledAttempts++;
    }
    if (a.number === 1) {
      // When the generator handed it to the client: a wait for a connection under a
      // declared cap is the client model's, not the generator's (validity check 4).
      bump(this.s.firstSends, bucketOf(r.sentMs - (r.clientWaitMs ?? 0), this.bucketMs));
      if (r.sentMs > this.lastFirstSendMs) this.lastFirstSendMs = r.sentMs;
      // The generator's own lag: a wait for a connection inside the client is reported
      // separately (clientWait), so late sends say whether the generator kept its schedule.
      if (this.latencies.scheduleLag(a, r, LATE_SEND_MS)) {
        bump(this.s.lateSends, bucketOf(a.origin.intendedMs, this.bucketMs));
        this.lateTotal++;
      }
      // The same lag as scheduleLag's: the generator's, without the client's wait for a connection.
      this.latenessLog?.sent(a.origin.id, r.sentMs - (r.clientWaitMs ?? 0) - a.origin.intendedMs);
    }
    if (r.clientWaitMs) {
      this.latencies.clientWait(r);
      bump(this.s.clientWaits, bucketOf(r.sentMs, this.bucketMs));
    }
    if (r.kind === 'ok') this.latencies.service(r);
    if (this.logging) this.events.attempt(a, r);
  }

  /**
   * What a client policy decided (subscribed through PolicyEnv.emit). Counts go to the
   * run's counters and per-bucket series; locally refused attempts and breaker
   * transitions also get an events.ndjson line (so every attempt number is accounted for).
   */
  policy(e: PolicyEvent): void {
    this.policies.count(e);
    if (this.logging) {
      const line = policyEvent(e, this.presence.clients);
      if (line) this.events.write(line);
    }
  }

  /**
   * The origin's final outcome. A success after the deadline is `deadline-exceeded`:
   * only the client knows whether it still wanted the answer.
   */
  outcome(o: Origin, r: AttemptResult): void {
    const kind: OutcomeKind = r.kind === 'ok' && r.endMs > o.deadlineMs ? 'deadline-exceeded' : r.kind;
    const b = bucketOf(r.endMs, this.bucketMs);
    this.recordedTotal++;
    this.inFlight--;
    this.outcomes[kind]++;
    const cls = this.perClass && o.request ? this.perClass[o.request.cls] : undefined;
    if (kind === 'ok') {
      bump(this.s.goodput, b);
      if (cls) bump(cls.goodput, b);
      if (this.successLog && r.endMs >= this.retainFromMs)
        this.successLog.push(r.endMs, r.endMs - o.intendedMs, cls ? o.request!.cls : -1, r.stream?.ttftMs);
      this.latencies.response(o, r, b);
    } else {
      if (kind === 'unsent') this.latenessLog?.unsent(o.id);
      bump(this.s.failures[kind], b);
      // A user who gave up on purpose (a stream cancelled, patience run out) is not an error.
      if (cls && kind !== 'abandoned') bump(cls.failed, b);
    }
    if (this.logging) this.events.outcome(o, r, kind);
  }

  /**
   * Marks the end of a bucket for the in-flight series (called by the driver once per
   * bucket, at or after its end). A bucket whose end was already marked keeps its value:
   * the status line may have shown it.
   */
  tick(nowMs: number): void {
    const i = bucketOf(nowMs - 1, this.bucketMs);
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
    const p = this.pending;
    while (this.pendingLow < p.length && p[this.pendingLow] === 0) this.pendingLow++;
    if (this.pendingLow < p.length && this.pendingLow <= last) last = this.pendingLow - 1;
    return Number.isFinite(last) ? Math.max(-1, last) : -1;
  }

  /** Bucket `i`'s figures from the series timeseries.csv is written from (see lastCompleteBucket). */
  figures(i: number): BucketFigures {
    const s = this.s;
    const offered = s.offered[i] ?? 0;
    const attempts = s.attempts[i] ?? 0;
    return {
      bucket: i,
      offered,
      attempts,
      goodput: s.goodput[i] ?? 0,
      amplification: offered > 0 ? attempts / offered : null,
      p99Ms: this.latencies.p99Ms(i),
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
    this.latencies.rotate(Number.MAX_SAFE_INTEGER);
    this.policies.close(this.lastTickMs);
    const buckets = closeSeries(this.s, this.perClass ?? []);
    return {
      bucketMs: this.bucketMs,
      buckets,
      series: this.s,
      ...this.latencies.summaries(),
      totals: {
        offered: this.offeredTotal,
        recorded: this.recordedTotal,
        attempts: this.attemptsTotal,
        lateSends: this.lateTotal,
        outcomes: { ...this.outcomes },
        attemptOutcomes: { ...this.attemptOutcomes },
        policies: { ...this.policies.counters },
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
      ...(this.latenessLog ? { lateness: this.latenessLog.values() } : {}),
    };
  }
}
