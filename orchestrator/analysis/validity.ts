import type { Experiment } from '../spec/schema.js';
import { meanWorkMs } from '../spec/plan.js';
import type { HypothesisResult } from './hypothesis.js';
import { round } from '../../foundation/round.js';

/**
 * Run validity (DESIGN.md §2): the five conditions a run must meet before any verdict.
 * Pure: every figure comes in measured; this module only compares and words it.
 */
export type ValidityCheckName = 'recorded' | 'baseline' | 'trigger' | 'rate' | 'lag' | 'cpu';

export interface ValidityCheck {
  readonly check: ValidityCheckName;
  /** What was checked, in words (which phase, which trigger). */
  readonly what: string;
  readonly value: number | string | null;
  readonly limit: number | string;
  readonly ok: boolean;
}

export interface Validity {
  readonly valid: boolean;
  /** The limits in force (defaults, or the file's `validity:` section). */
  readonly limits: ValidityLimits;
  readonly checks: readonly ValidityCheck[];
  /** The failed checks, each with its measured value and limit. */
  readonly failed: readonly Pick<ValidityCheck, 'check' | 'what' | 'value' | 'limit'>[];
}

export interface ValidityLimits {
  readonly triggerOnTimeMs: number;
  readonly rateTolerance: number;
  readonly lagP99Ms: number;
  /** How the lag limit was reached, e.g. "max(1 ms, S/4 = 5 ms, 2% of the 500 ms timeout = 10 ms)". */
  readonly lagP99Why: string;
  /** The hard ceiling on any first attempt's lag: the client's attempt timeout, ms (lateness beyond it is never harmless). */
  readonly lagCeilingMs?: number;
  readonly generatorCpu: number;
}

/** The limits of an experiment: its `validity:` section over the defaults of §2. */
export function validityLimits(e: Experiment): ValidityLimits {
  const v = e.validity ?? {};
  // Your own system's mean work is not declared: S/4 drops out of the limit.
  const s = e.lab ? meanWorkMs(e) : 0;
  const timeout = e.client.timeout;
  const derived = Math.max(1, s / 4, 0.02 * timeout);
  return {
    triggerOnTimeMs: v.triggerOnTime ?? 100,
    rateTolerance: v.rateTolerance ?? 0.02,
    lagP99Ms: v.lagP99 ?? round(derived, 3),
    lagP99Why:
      v.lagP99 !== undefined
        ? 'set in the experiment file (validity.lagP99)'
        : !e.lab
          ? `max(1 ms, 2% of the ${timeout} ms attempt timeout = ${round(0.02 * timeout, 3)} ms; your own system's mean work S is not declared): lateness far below the system's own time constants cannot change the phenomenon`
          : `max(1 ms, S/4 = ${round(s / 4, 3)} ms, 2% of the ${timeout} ms attempt timeout = ${round(0.02 * timeout, 3)} ms): lateness far below the system's own time constants cannot change the phenomenon`,
    lagCeilingMs: timeout,
    generatorCpu: v.generatorCpu ?? 0.9,
  };
}

/** One trigger as planned and as it happened. */
export interface TriggerOutcome {
  readonly describe: string;
  readonly plannedStartMs: number;
  /** null when it was never applied (the run ended first). */
  readonly startMs: number | null;
  readonly applyError?: string | undefined;
  readonly undoError?: string | undefined;
  /** Undone (its cause removed) before the run ended. */
  readonly undone: boolean;
}

/** A phase's offered load, as planned and as the generator achieved it (first attempts by actual send time). */
export interface PhaseRate {
  readonly phase: string;
  readonly seconds: number;
  /** Expected origins over the phase; null when the load has no planned rate (closed loop). */
  readonly expected: number | null;
  readonly achieved: number;
}

/**
 * What is known of whether the generator's lateness changed the outcome (check 4):
 *   - replayed: the run's twin was simulated with the intended and the actual send times
 *     (orchestrator/run/replay.ts, compared by analysis/lateness.ts); `value` words both;
 *   - imposed: this run is such a replay, its lateness imposed from the lab's record (the
 *     lab run's own check judges that lateness and its rate);
 *   - unmodelled: no replay (the simulation does not model the experiment, or the replay
 *     could not judge): the fixed limit applies, for the reason given.
 * Absent: the fixed limit (a simulated run, which keeps its schedule exactly).
 */
export type LatenessVerdict =
  | { readonly kind: 'replayed'; readonly harmless: boolean; readonly value: string }
  | { readonly kind: 'imposed' }
  | { readonly kind: 'unmodelled'; readonly why: string };

export interface ValidityInput {
  readonly limits: ValidityLimits;
  readonly offered: number;
  readonly recorded: number;
  /** Origins never sent (the run ended first). */
  readonly unsent: number;
  /** The baseline's hypothesis verdicts (every declared threshold, global and per class). */
  readonly baselineHypothesis: readonly HypothesisResult[];
  readonly triggers: readonly TriggerOutcome[];
  readonly phases: readonly PhaseRate[];
  readonly lagP99Ms: number | null;
  readonly lagSamples: number;
  /** The largest first-attempt lag, ms (null: no sample), against the hard ceiling. */
  readonly lagMaxMs?: number | null;
  readonly lateness?: LatenessVerdict;
  /** The generator's CPU per second, as a share of one core; null where not measured (the simulation). */
  readonly generatorCpu: readonly (number | null)[] | null;
}

export function judgeValidity(x: ValidityInput): Validity {
  const L = x.limits;
  const checks: ValidityCheck[] = [];
  const add = (c: ValidityCheck): void => void checks.push(c);

  // 1. offered = recorded, and nothing left unsent.
  add({
    check: 'recorded',
    what: 'every origin offered has exactly one outcome',
    value: `${x.recorded} recorded of ${x.offered} offered${x.unsent ? `, ${x.unsent} never sent` : ''}`,
    limit: 'recorded = offered',
    ok: x.offered === x.recorded && x.unsent === 0,
  });

  // 2. The steady state held before the trigger.
  // A declared threshold that could not be measured did not hold; the default steady
  // state's growth tests need 10 s of baseline, and a shorter one leaves them unmeasured,
  // named in the hypothesis table, without failing the check (its goodput still counts).
  const bad = x.baselineHypothesis.filter(
    (h) =>
      h.verdict === 'fail' || (h.verdict === 'unmeasured' && !(h.default && h.metric.endsWith(' growth'))),
  );
  // Without a declared hypothesis the default one is judged (DESIGN.md §2), and named.
  const isDefault = x.baselineHypothesis.length > 0 && x.baselineHypothesis.every((h) => h.default);
  add({
    check: 'baseline',
    what: isDefault
      ? 'the default steady state (no hypothesis declared) held in the baseline'
      : 'the steady-state hypothesis held in the baseline',
    value:
      x.baselineHypothesis.length === 0
        ? 'nothing judged'
        : bad.length === 0
          ? passedOf(x.baselineHypothesis)
          : bad
              .map((h) => `${h.class ? `${h.class} ` : ''}${h.metric} ${fmt(h.value)} (${h.verdict})`)
              .join(', '),
    limit:
      x.baselineHypothesis.length === 0
        ? 'the declared or the default steady state'
        : x.baselineHypothesis
            .map((h) => `${h.class ? `${h.class} ` : ''}${h.metric} ${h.threshold}`)
            .join(', '),
    // Nothing judged at all (no window): nothing held.
    ok: x.baselineHypothesis.length > 0 && bad.length === 0,
  });

  // 3. Every trigger took effect on time and was undone without error.
  x.triggers.forEach((t) => {
    const late = t.startMs === null ? null : t.startMs - t.plannedStartMs;
    const problem =
      t.startMs === null
        ? 'never applied'
        : t.applyError
          ? `failed to apply: ${t.applyError}`
          : t.undoError
            ? `undo failed: ${t.undoError}`
            : !t.undone
              ? 'not undone'
              : late! > L.triggerOnTimeMs
                ? `took effect ${round(late!, 3)} ms after its planned time`
                : null;
    add({
      check: 'trigger',
      what: `${t.describe} took effect on time and was undone`,
      value: problem ?? `took effect ${round(Math.max(0, late!), 3)} ms after its planned time, undone`,
      limit: `within ${L.triggerOnTimeMs} ms, applied and undone without error`,
      ok: problem === null,
    });
  });

  // 4a. The generator offered the planned rate in every phase.
  const imposed = x.lateness?.kind === 'imposed';
  if (imposed)
    add({
      check: 'rate',
      what: 'offered rate per phase',
      value: "imposed: the lab run's actual send times (a lateness replay)",
      limit: "none here (the lab run's own check judges its rate)",
      ok: true,
    });
  for (const p of imposed ? [] : x.phases) {
    if (p.seconds <= 0 || p.expected === null) continue;
    const allowed = Math.max(L.rateTolerance * p.expected, 3 * Math.sqrt(p.expected));
    const off = p.achieved - p.expected;
    add({
      check: 'rate',
      what: `offered rate in the ${p.phase}, /s`,
      value: round(p.achieved / p.seconds, 3),
      limit: `${round(p.expected / p.seconds, 3)}/s ± ${round(allowed / p.seconds, 3)}/s (${pctOf(L.rateTolerance)} or 3 Poisson SDs)`,
      ok: Math.abs(off) <= allowed,
    });
  }

  // 4b. The generator's lateness did not change the outcome.
  add(lagCheck(x, L));

  // 5. The generator's own CPU.
  if (x.generatorCpu !== null) {
    let worst = 0;
    let at = -1;
    x.generatorCpu.forEach((c, i) => {
      if (c !== null && c > worst) [worst, at] = [c, i];
    });
    add({
      check: 'cpu',
      what: `the generator's CPU, share of one core, in its busiest second${at >= 0 ? ` (second ${at})` : ''}`,
      value: round(worst, 3),
      limit: L.generatorCpu,
      ok: worst <= L.generatorCpu,
    });
  }

  const failed = checks.filter((c) => !c.ok).map(({ ok: _ok, ...c }) => c);
  return { valid: failed.length === 0, limits: L, checks, failed };
}

/**
 * Check 4's lateness: measured by the replay where there is one, the fixed limit on lag
 * p99 where there is none; lateness beyond the client's attempt timeout fails it always
 * (an attempt sent after its own timeout would have expired is a different request).
 */
function lagCheck(x: ValidityInput, L: ValidityLimits): ValidityCheck {
  const v = x.lateness;
  if (v?.kind === 'imposed')
    return {
      check: 'lag',
      what: 'schedule lag of first attempts',
      value: "imposed: the lab run's actual send times (a lateness replay)",
      limit: "none here (the lab run's own check judges its lateness)",
      ok: true,
    };
  const max = x.lagMaxMs ?? null;
  const ceilingMs = L.lagCeilingMs ?? Number.POSITIVE_INFINITY;
  const beyond = max !== null && max > ceilingMs;
  const ceiling = beyond
    ? `; a first attempt was sent ${round(max, 3)} ms late, beyond the ${ceilingMs} ms attempt timeout: lateness beyond it is never harmless`
    : '';
  const ceilingLimit = Number.isFinite(ceilingMs)
    ? `; no first attempt later than the ${ceilingMs} ms attempt timeout`
    : '';
  if (v?.kind === 'replayed')
    return {
      check: 'lag',
      what: "the generator's lateness did not change the outcome (its twin simulated with the intended and with the actual send times)",
      value: v.value + ceiling,
      limit: `the same outcome class and figures within their noise${ceilingLimit}`,
      ok: v.harmless && !beyond,
    };
  return {
    check: 'lag',
    what: `schedule lag p99 of first attempts, ms${v?.kind === 'unmodelled' ? ` (the fixed limit: ${v.why})` : ''}`,
    value: x.lagP99Ms === null ? null : beyond ? `${round(x.lagP99Ms, 3)}${ceiling}` : round(x.lagP99Ms, 3),
    limit: beyond ? `${L.lagP99Ms}${ceilingLimit}` : L.lagP99Ms,
    ok: !beyond && (x.lagSamples === 0 || (x.lagP99Ms !== null && x.lagP99Ms <= L.lagP99Ms)),
  };
}

/**
 * The warning of a run whose lateness failed check 4, or null when it passed: "412 late
 * sends (3.1% of origins …), schedule lag p99 13.1 ms above its limit of 10 ms (…): the
 * generator could not keep the schedule".
 */
export function lateWarning(
  v: Pick<Validity, 'failed' | 'limits'>,
  x: { readonly lateSends: number; readonly offered: number; readonly lagP99Ms: number | null },
): string | null {
  const failed = v.failed.find((f) => f.check === 'lag');
  if (!failed || x.lagP99Ms === null) return null;
  const L = v.limits;
  const p99 = round(x.lagP99Ms, 3);
  const why =
    x.lagP99Ms > L.lagP99Ms
      ? `schedule lag p99 ${p99} ms above its limit of ${L.lagP99Ms} ms (${L.lagP99Why})`
      : `schedule lag p99 ${p99} ms; ${failed.what}: ${fmt(failed.value)}`;
  const share = `${round((x.lateSends / Math.max(1, x.offered)) * 100, 2)}%`;
  return `${x.lateSends} late sends (${share} of origins sent more than 1 ms after their intended time), ${why}: the generator could not keep the schedule`;
}

/** One line per failed check: "schedule lag p99 (first attempts): 37.2 (limit 10)". */
export function describeFailed(v: Pick<Validity, 'failed'>): string[] {
  return v.failed.map((f) => `${f.what}: ${fmt(f.value)} (limit ${fmt(f.limit)})`);
}

function fmt(v: number | string | null): string {
  return v === null ? 'unmeasured' : String(v);
}

function pctOf(x: number): string {
  return `${round(x * 100, 3)}%`;
}

/** "3 of 3 thresholds pass", naming those left unmeasured without failing the check. */
function passedOf(hs: readonly HypothesisResult[]): string {
  const pass = hs.filter((h) => h.verdict === 'pass').length;
  const unmeasured = hs.filter((h) => h.verdict === 'unmeasured');
  const tail = unmeasured.length
    ? `; ${unmeasured.map((h) => `${h.metric} unmeasured (${h.note ?? 'no samples'})`).join(', ')}`
    : '';
  return `${pass} of ${hs.length} thresholds pass${tail}`;
}
