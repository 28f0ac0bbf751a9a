import type { FailureKind } from '../outcome.js';
import { FAILURE_KINDS } from '../outcome.js';
import { round } from '../../foundation/round.js';

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

/** One request class's per-bucket counts (only when the workload declares a mix). */
export interface ClassSeries {
  /** Origins of the class by intended time. */
  readonly offered: number[];
  /** Its successes within the deadline, by completion time. */
  readonly goodput: number[];
  /** Its failed origins (any kind but `abandoned`: the user gave up on purpose), by completion time. */
  readonly failed: number[];
}

/** The bucket of time `ms` (ms since the run's start; anything before it is bucket 0). */
export function bucketOf(ms: number, bucketMs: number): number {
  return ms <= 0 ? 0 : Math.floor(ms / bucketMs);
}

export function emptySeries(): BucketSeries {
  const failures = {} as Record<FailureKind, number[]>;
  for (const k of FAILURE_KINDS) failures[k] = [];
  return {
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
}

/** Adds one to bucket `i`, growing the series with zeros up to it. */
export function bump(arr: number[], i: number): void {
  while (arr.length <= i) arr.push(0);
  arr[i]!++;
}

export function setAt<T>(arr: (T | null)[], i: number, v: T): void {
  while (arr.length <= i) arr.push(null);
  arr[i] = v;
}

/**
 * Brings every series to one length (the longest counted one), at the run's end: zeros
 * for counts, null for latency figures; the breaker fractions rounded into [0, 1].
 * Returns that length, the run's number of buckets.
 */
export function closeSeries(s: BucketSeries, perClass: readonly ClassSeries[]): number {
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
  for (const c of perClass) for (const arr of [c.offered, c.goodput, c.failed]) fill(arr, buckets, 0);
  return buckets;
}

function fill<T>(arr: T[], n: number, v: T): void {
  while (arr.length < n) arr.push(v);
}
