/**
 * Sustaining mechanisms (DESIGN.md §2, "Outcome of a valid run"): a run that did not
 * recover is `metastable` only when one of these is measured over the observation's
 * tail with its figure past its threshold. Each mechanism is one entry of MECHANISMS:
 * it reads the figures the lab measured and says what it found, against which threshold,
 * and whether it is met; a mechanism the lab does not measure (no cache, one replica, no
 * GC series) leaves no entry. A new mechanism (a new lab's series) is one more entry.
 * The thresholds are documented in docs/metrics.md ("Sustaining mechanisms").
 */

/** What the system did over the observation's tail, as measured (the caller computes it from the record). */
export interface SustainingFigures {
  /** null: no capacity known (your own system, never calibrated), so load above it is not measured. */
  readonly capacityPerS: number | null;
  /** Requests the service received per second (scraped); null when not scraped. */
  readonly receivedPerS: number | null;
  /** Attempts the client sent per second. */
  readonly attemptsPerS: number;
  readonly amplification: number | null;
  readonly amplificationServer: number | null;
  /** Cache hits / (hits + misses), where the lab has a cache; and the same in the baseline. */
  readonly cacheHitRatio: number | null;
  readonly baselineCacheHitRatio: number | null;
  /** Failed origins / finished origins. */
  readonly errorRatio: number | null;
  /**
   * Worker time spent on error paths (lab.api.errorCost) / worker time available, where
   * the service reports it (api_error_path_seconds_total); null otherwise.
   */
  readonly errorPathShare?: number | null;
  /** Mean database connections busy / connections there are (pool × replicas), where scraped. */
  readonly dbBusyShare?: number | null;
  /** Mean requests waiting for a database connection, where scraped. */
  readonly dbWaiting?: number | null;
  /** Requests each replica completed over the tail (null: it never answered), with several replicas. */
  readonly replicaCompleted?: readonly (number | null)[] | null;
  /** Seconds spent in garbage collection / wall seconds × replicas (`gc_seconds*` series), where scraped. */
  readonly gcShare?: number | null;
  /** The tail's length, s (for the wording). */
  readonly seconds?: number;
}

/** One mechanism as the run measured it. */
export interface Mechanism {
  readonly name: MechanismName;
  /** What was measured, in words with its numbers. */
  readonly figure: string;
  /** The threshold it is held to, in words. */
  readonly threshold: string;
  readonly met: boolean;
}

export type MechanismName = 'load-above-capacity' | 'cold-cache' | 'error-path' | 'replicas-down' | 'gc-time';

/** Each mechanism in a few words, as the report names it ("sustained by: load ≥ capacity — …"). */
export const MECHANISM_LABELS: Readonly<Record<MechanismName, string>> = {
  'load-above-capacity': 'load ≥ capacity',
  'cold-cache': 'cold cache with the database saturated',
  'error-path': 'error paths',
  'replicas-down': 'replicas down',
  'gc-time': 'GC time',
};

/** A cache "collapsed": its hit ratio fell by more than this (absolute) from the baseline's. */
export const COLD_CACHE_DROP = 0.2;
/** The database is saturated: this share of its connections busy on average… */
export const DB_BUSY_SATURATED = 0.9;
/** …or at least this many requests waiting for a connection on average. */
export const DB_WAITING_SATURATED = 1;
/** Error paths sustain the collapse when they take at least this share of the workers' time. */
export const ERROR_PATH_SHARE = 0.2;
/** GC sustains it when it takes at least this share of the wall time. */
export const GC_SHARE = 0.2;

type Rule = (f: SustainingFigures) => Mechanism | null;

/** The mechanisms in the order they are named when several are met (the dominant one first). */
export const MECHANISMS: readonly Rule[] = [
  // The work the service receives exceeds its capacity: received/s × mean work per
  // request ≥ workers × replicas, i.e. received/s ≥ μ (the capacity in use); the
  // client's attempts where the server is not scraped.
  (f) => {
    if (f.capacityPerS === null) return null;
    const capacityPerS = f.capacityPerS;
    const server = f.receivedPerS !== null;
    const rate = f.receivedPerS ?? f.attemptsPerS;
    const amp = server ? f.amplificationServer : f.amplification;
    return {
      name: 'load-above-capacity',
      figure: server
        ? `the api receives ${num(rate)}/s against a capacity of ${num(capacityPerS)}/s${amp !== null ? ` (amplification ${num(amp, 2)})` : ''}`
        : `the client sends ${num(rate)} attempts/s against a capacity of ${num(capacityPerS)}/s${amp !== null ? ` (amplification ${num(amp, 2)})` : ''} (client-side: no server metrics)`,
      threshold: `${server ? 'requests received' : 'attempts sent'} per second ≥ the capacity (${num(capacityPerS)}/s)`,
      met: rate >= capacityPerS,
    };
  },
  // A loss of capacity that outlives the trigger: the cache stays cold and the database
  // behind it is saturated, so misses cannot refill it.
  (f) => {
    if (f.cacheHitRatio === null || f.baselineCacheHitRatio === null) return null;
    const busy = f.dbBusyShare ?? null;
    const waiting = f.dbWaiting ?? null;
    const drop = f.baselineCacheHitRatio - f.cacheHitRatio;
    const saturated =
      (busy !== null && busy >= DB_BUSY_SATURATED) || (waiting !== null && waiting >= DB_WAITING_SATURATED);
    const db =
      busy === null && waiting === null
        ? 'the database load not scraped'
        : `the database ${saturated ? 'saturated' : 'not saturated'} (${[
            busy !== null ? `${pct(busy)} of its connections busy` : null,
            waiting !== null ? `${num(waiting)} requests waiting for one` : null,
          ]
            .filter(Boolean)
            .join(', ')})`;
    return {
      name: 'cold-cache',
      figure: `cache hit ratio ${pct(f.cacheHitRatio)} (baseline ${pct(f.baselineCacheHitRatio)}), ${db}`,
      threshold: `hit ratio more than ${COLD_CACHE_DROP * 100} points under the baseline's, with the database saturated (≥ ${DB_BUSY_SATURATED * 100}% of its connections busy or ≥ ${DB_WAITING_SATURATED} request waiting)`,
      met: drop > COLD_CACHE_DROP && saturated,
    };
  },
  // Expensive error paths: errors make the service slower, which makes more errors.
  (f) => {
    const share = f.errorPathShare ?? null;
    if (share === null) return null;
    return {
      name: 'error-path',
      figure: `the workers spend ${pct(Math.min(1, share))} of their time on error paths`,
      threshold: `≥ ${ERROR_PATH_SHARE * 100}% of the workers' time`,
      met: share >= ERROR_PATH_SHARE,
    };
  },
  // Replicas down: a replica serving nothing over the tail (the survivors carry its load).
  (f) => {
    const r = f.replicaCompleted ?? null;
    if (r === null || r.length < 2) return null;
    const down = r.flatMap((c, i) => (c === null || c === 0 ? [i] : []));
    return {
      name: 'replicas-down',
      figure:
        down.length === 0
          ? `all ${r.length} replicas serving`
          : `${down.map((i) => `api[${i}]`).join(', ')} completed nothing${f.seconds ? ` over the last ${num(f.seconds)} s` : ''} (${down.length} of ${r.length} replicas down)`,
      threshold: 'a replica completing no request over the tail',
      met: down.length > 0,
    };
  },
  // GC time (JVM labs): a series named gc_seconds… where the service exports one.
  (f) => {
    const share = f.gcShare ?? null;
    if (share === null) return null;
    return {
      name: 'gc-time',
      // GC seconds per wall second (per replica), in ms: the JVM's gc_seconds column per second.
      figure: `GC time per second ${num(share * 1000, 0)} ms (garbage collection takes ${pct(Math.min(1, share))} of the time)`,
      threshold: `≥ ${GC_SHARE * 100}% of the wall time`,
      met: share >= GC_SHARE,
    };
  },
];

/** Every mechanism the lab measured, in MECHANISMS order. */
export function measureMechanisms(f: SustainingFigures): Mechanism[] {
  return MECHANISMS.map((m) => m(f)).filter((m): m is Mechanism => m !== null);
}

/** The sustaining effect in words: the mechanisms met, the dominant first; null when none is. */
export function describeMet(ms: readonly Mechanism[]): string | null {
  const met = ms.filter((m) => m.met);
  return met.length === 0 ? null : met.map((m) => m.figure).join('; ');
}

/** "no sustaining effect found: the api receives 279.6/s against a capacity of 400/s (below: …)". */
export function describeNoneMet(ms: readonly Mechanism[]): string {
  return `no sustaining effect found: ${ms.map((m) => `${m.figure} (threshold: ${m.threshold})`).join('; ')}`;
}

function num(x: number, d = 1): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: d });
}

function pct(x: number): string {
  return `${Math.round(x * 1000) / 10}%`;
}
