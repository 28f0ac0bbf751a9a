import { analyzeRecovery, type RecoveryInput } from './recovery.js';
import { classifyOutcome, OUTCOMES, type Outcome, type OutcomeInput } from './outcome.js';
import { round } from '../../foundation/round.js';

/**
 * How far a run's outcome depends on its recovery criterion (issue 32, point 6): the same
 * recorded goodput judged again with every recovery multiple k in K_GRID and every
 * tolerance in TOLERANCE_GRID (and the run's own k and tolerance, wherever they fall), by
 * the same analyzeRecovery and classifyOutcome that gave the run its outcome. Seed 004
 * calls the choice of k a method decision the thesis must defend; this table is the
 * defence, or the warning.
 *
 * Tolerances below the noise floor of the recovery window (DESIGN.md §2, "Recovery
 * criterion limits") are not computed: a W-second mean of a Poisson-like goodput of g/s
 * has a relative standard deviation of 1/√(g·W), so a tolerance under three of them is
 * missed by noise alone, and its cell would measure the noise, not the criterion.
 */

/** The recovery multiples k of the trigger's duration every report tries. */
export const K_GRID: readonly number[] = [2, 5, 10];
/** The tolerances every report tries (fractions of the baseline goodput). */
export const TOLERANCE_GRID: readonly number[] = [0.05, 0.1, 0.2];

/** One criterion judged on one run. */
export interface SensitivityCell {
  /** The recovery multiple: recovered means within k × the trigger's duration. */
  readonly k: number;
  readonly tolerance: number;
  /** This is the run's own criterion (the one its outcome was given by). */
  readonly own: boolean;
  /** False when the tolerance is below the noise floor: then nothing was computed. */
  readonly allowed: boolean;
  /** The outcome under this criterion; null when not allowed. */
  readonly outcome: Outcome | null;
  /** The recovery time under this criterion, s after the trigger's end; null when it did not recover. */
  readonly recoveryTimeS: number | null;
}

/** summary.json's `sensitivity` of one valid run. */
export interface CriterionSensitivity {
  /** The run's own criterion. */
  readonly criterion: { readonly k: number; readonly tolerance: number };
  /** The trigger's duration D, s (the deadline of a cell is k × D). */
  readonly triggerDurationS: number;
  /** The recovery window and hold every cell keeps, as the run's plan has them, s. */
  readonly windowS: number;
  readonly holdS: number;
  /** 3/√(baseline goodput × W), a fraction; null when there is no baseline goodput. */
  readonly noiseFloor: number | null;
  readonly ks: readonly number[];
  readonly tolerances: readonly number[];
  /** Row-major: every tolerance of ks[0], then of ks[1], … */
  readonly cells: readonly SensitivityCell[];
  /** "robust: …" or "flips: …", one sentence without its full stop. */
  readonly sentence: string;
}

export interface SensitivityInput {
  /** The recovery analysis's input as the run was judged (its own k and tolerance). */
  readonly recovery: RecoveryInput;
  /** classifyOutcome's input but for the recovery, which each cell supplies. */
  readonly outcome: Omit<OutcomeInput, 'recovery'>;
}

/**
 * The noise floor of a recovery window: 3/√(g·W) for a baseline goodput of g/s over a
 * window of W s (DESIGN.md §2); null without a baseline goodput.
 */
export function noiseFloor(baselineGoodputPerS: number | null, windowS: number): number | null {
  if (baselineGoodputPerS === null || !(baselineGoodputPerS > 0)) return null;
  return 3 / Math.sqrt(baselineGoodputPerS * effectiveWindowS(windowS));
}

/** The window analyzeRecovery averages over: whole seconds, at least one. */
export function effectiveWindowS(windowS: number): number {
  return Math.max(1, Math.round(windowS));
}

/**
 * Whether the run's own tolerance is below its noise floor: then its verdict rests on a
 * criterion noise alone can miss, and the report says so beside the table.
 */
export function ownBelowNoiseFloor(s: {
  readonly criterion: { readonly tolerance: number };
  readonly noiseFloor: number | null;
}): boolean {
  return s.noiseFloor !== null && s.criterion.tolerance < s.noiseFloor;
}

/** Null for an invalid run: it has no verdict, so it has no verdict's sensitivity either. */
export function criterionSensitivity(x: SensitivityInput): CriterionSensitivity | null {
  if (!x.outcome.validity.valid) return null;
  const r = x.recovery;
  const floor = noiseFloor(r.baselineGoodputPerS, r.windowS);
  // Parsed percentages (10% → 0.1) can carry float noise: compare at a millionth.
  const ownTolerance = round(r.tolerance, 6);
  const ks = withOwn(K_GRID, r.within);
  const tolerances = withOwn(TOLERANCE_GRID, ownTolerance);
  const cells: SensitivityCell[] = [];
  for (const k of ks)
    for (const tolerance of tolerances) {
      const own = k === r.within && tolerance === ownTolerance;
      // The run's own cell is its verdict: always computed, whatever validation made of it.
      const allowed = own || floor === null || tolerance >= floor;
      if (!allowed) {
        cells.push({ k, tolerance, own, allowed, outcome: null, recoveryTimeS: null });
        continue;
      }
      // The own cell with the run's exact tolerance, so it reproduces the run's outcome.
      const recovery = analyzeRecovery({ ...r, within: k, tolerance: own ? r.tolerance : tolerance });
      const verdict = classifyOutcome({ ...x.outcome, recovery });
      cells.push({
        k,
        tolerance,
        own,
        allowed,
        outcome: verdict.outcome,
        recoveryTimeS: recovery.recoveryTimeS,
      });
    }
  return {
    criterion: { k: r.within, tolerance: ownTolerance },
    triggerDurationS: round(r.triggerDurationS, 3),
    windowS: r.windowS,
    holdS: r.holdS,
    noiseFloor: floor === null ? null : round(floor, 4),
    ks,
    tolerances,
    cells,
    sentence: describeSensitivity(
      { ks, tolerances, criterion: { k: r.within, tolerance: ownTolerance } },
      (k, t) => {
        const c = cells.find((c) => c.k === k && c.tolerance === t);
        return c?.outcome ?? null;
      },
    ),
  };
}

/** One criterion over several runs: the outcomes of the valid runs under it. */
export interface SensitivityTallyCell {
  readonly k: number;
  readonly tolerance: number;
  readonly own: boolean;
  /** False when the tolerance is below the noise floor of any valid run. */
  readonly allowed: boolean;
  /** Valid runs by outcome under this criterion; empty when not allowed. */
  readonly outcomes: Partial<Record<Outcome, number>>;
  /** The valid runs counted. */
  readonly of: number;
  /** "metastable 3/3", "recovered 2/3, recovered-late 1/3"; null when not allowed. */
  readonly tally: string | null;
}

/** The aggregate summary.json's `sensitivity`: each cell's outcomes over the valid runs. */
export interface SensitivityTally {
  readonly criterion: { readonly k: number; readonly tolerance: number };
  /** The valid runs whose sensitivity is counted. */
  readonly runs: number;
  readonly triggerDurationS: number;
  readonly windowS: number;
  readonly holdS: number;
  /** The highest noise floor of those runs (the one that decides what is allowed). */
  readonly noiseFloor: number | null;
  readonly ks: readonly number[];
  readonly tolerances: readonly number[];
  readonly cells: readonly SensitivityTallyCell[];
  readonly sentence: string;
}

/**
 * Per cell, the outcomes over the runs that have a sensitivity (the valid ones: an invalid
 * run has none); null when none has. Runs of one experiment share their criterion, so
 * their grids line up; a cell is allowed only where every run allowed it.
 */
export function tallySensitivity(
  runs: readonly (CriterionSensitivity | null | undefined)[],
): SensitivityTally | null {
  const xs = runs.filter((s): s is CriterionSensitivity => s !== null && s !== undefined);
  const first = xs[0];
  if (!first) return null;
  const floors = xs.map((s) => s.noiseFloor).filter((f): f is number => f !== null);
  const cells: SensitivityTallyCell[] = [];
  for (const k of first.ks)
    for (const tolerance of first.tolerances) {
      const mine = xs.map((s) => s.cells.find((c) => c.k === k && c.tolerance === tolerance));
      const allowed = mine.every((c) => c?.allowed === true);
      const outcomes: Partial<Record<Outcome, number>> = {};
      if (allowed) for (const c of mine) outcomes[c!.outcome!] = (outcomes[c!.outcome!] ?? 0) + 1;
      cells.push({
        k,
        tolerance,
        own: mine[0]?.own ?? false,
        allowed,
        outcomes,
        of: xs.length,
        tally: allowed ? describeOutcomes(outcomes, xs.length) : null,
      });
    }
  return {
    criterion: first.criterion,
    runs: xs.length,
    triggerDurationS: first.triggerDurationS,
    windowS: first.windowS,
    holdS: first.holdS,
    noiseFloor: floors.length > 0 ? Math.max(...floors) : null,
    ks: first.ks,
    tolerances: first.tolerances,
    cells,
    sentence: describeSensitivity(first, (k, t) => {
      const c = cells.find((c) => c.k === k && c.tolerance === t);
      return c?.tally ?? null;
    }),
  };
}

/** What a report shows of the runs' sensitivity: each cell's label, the outcome of one run or the tally of several. */
export interface SensitivityView extends Omit<SensitivityTally, 'cells'> {
  readonly cells: readonly {
    readonly k: number;
    readonly tolerance: number;
    readonly own: boolean;
    readonly allowed: boolean;
    /** The outcome (one run) or the tally (several); null when not allowed. */
    readonly label: string | null;
  }[];
}

/**
 * The table a report shows for these runs: one run's outcomes, or several runs' tallies;
 * null when no run has a sensitivity (invalid runs, summaries written before it existed).
 */
export function sensitivityView(
  runs: readonly (CriterionSensitivity | null | undefined)[],
): SensitivityView | null {
  if (runs.length === 1) {
    const s = runs[0];
    if (!s) return null;
    return { ...s, runs: 1, cells: s.cells.map((c) => ({ ...c, label: c.outcome })) };
  }
  const t = tallySensitivity(runs);
  return t && { ...t, cells: t.cells.map((c) => ({ ...c, label: c.tally })) };
}

/** "metastable 3/3" or "recovered 2/3, recovered-late 1/3", in the outcomes' order. */
function describeOutcomes(o: Partial<Record<Outcome, number>>, of: number): string {
  return OUTCOMES.filter((x) => (o[x] ?? 0) > 0)
    .map((x) => `${x} ${o[x]}/${of}`)
    .join(', ');
}

interface Grid {
  readonly ks: readonly number[];
  readonly tolerances: readonly number[];
  readonly criterion: { readonly k: number; readonly tolerance: number };
}

/**
 * The table in one sentence: "robust: metastable under every allowed criterion", or
 * "flips: recovered-late with k = 2, recovered with k ≥ 5; tolerance does not matter"
 * (which factor flips it, and where). `label` is a cell's outcome (or tally); null when
 * the cell is not allowed.
 */
export function describeSensitivity(g: Grid, label: (k: number, tolerance: number) => string | null): string {
  const allowed: string[] = [];
  for (const k of g.ks)
    for (const t of g.tolerances) {
      const l = label(k, t);
      if (l !== null) allowed.push(l);
    }
  const distinct = new Set(allowed);
  if (allowed.length <= 1)
    return 'untested: every criterion but the run’s own has a tolerance below the noise floor';
  if (distinct.size === 1) {
    const only = allowed[0]!;
    return only.startsWith('unmeasured')
      ? `${only} under every allowed criterion: the observation after the trigger is too short to judge any`
      : `robust: ${only} under every allowed criterion`;
  }
  const row = (k: number) => g.tolerances.map((t) => label(k, t));
  const col = (t: number) => g.ks.map((k) => label(k, t));
  const varies = (xs: readonly (string | null)[]) => new Set(xs.filter((x) => x !== null)).size > 1;
  const kMatters = g.tolerances.some((t) => varies(col(t)));
  const tMatters = g.ks.some((k) => varies(row(k)));
  const byK = (t: number) => segments(g.ks, col(t), (k) => `k ${k}`);
  const byT = (k: number) => segments(g.tolerances, row(k), (t) => `tolerance ${pct(t)}`);
  // Where one factor alone matters, any line along it tells the whole story: take the
  // run's own one (each line's allowed cells agree where the other factor does not matter).
  if (kMatters && !tMatters)
    return `flips: ${byK(firstVarying(g.tolerances, col, g.criterion.tolerance))}; tolerance does not matter`;
  if (tMatters && !kMatters)
    return `flips: ${byT(firstVarying(g.ks, row, g.criterion.k))}; k does not matter`;
  if (kMatters && tMatters) {
    const c = g.criterion;
    const along = (v: boolean, text: string, same: string) => (v ? text : same);
    const ownCol = col(c.tolerance);
    const ownRow = row(c.k);
    return `flips with both k and tolerance: at tolerance ${pct(c.tolerance)}, ${along(varies(ownCol), byK(c.tolerance), `${firstOf(ownCol)} for every k`)}; at k = ${c.k}, ${along(varies(ownRow), byT(c.k), `${firstOf(ownRow)} for every tolerance`)}`;
  }
  // Only cells that share neither a k nor a tolerance with an allowed other differ.
  return 'flips: the outcome differs between criteria that share no k and no tolerance (see the table)';
}

/** The run's own line along a factor when it varies, else the first that does. */
function firstVarying<T>(values: readonly T[], line: (v: T) => (string | null)[], own: T): T {
  const v = (x: T) => new Set(line(x).filter((l) => l !== null)).size > 1;
  return v(own) ? own : (values.find(v) ?? own);
}

function firstOf(xs: readonly (string | null)[]): string {
  return xs.find((x) => x !== null) ?? 'not allowed';
}

/**
 * Runs of equal labels along ascending values, each named by the values it covers:
 * "recovered-late with k = 2, recovered with k ≥ 5". Cells not allowed are skipped.
 */
function segments(
  values: readonly number[],
  labels: readonly (string | null)[],
  name: (v: number) => string,
): string {
  const pts = values.map((v, i) => ({ v, l: labels[i] ?? null })).filter((p) => p.l !== null);
  const groups: { l: string; vs: number[] }[] = [];
  for (const p of pts) {
    const last = groups[groups.length - 1];
    if (last && last.l === p.l) last.vs.push(p.v);
    else groups.push({ l: p.l!, vs: [p.v] });
  }
  return groups
    .map((g, i) => {
      const lo = g.vs[0]!;
      const hi = g.vs[g.vs.length - 1]!;
      const [what, v] = splitName(name(lo));
      const [, vHi] = splitName(name(hi));
      const where =
        g.vs.length === 1
          ? `${what} = ${v}`
          : i === 0
            ? `${what} ≤ ${vHi}`
            : i === groups.length - 1
              ? `${what} ≥ ${v}`
              : `${what} from ${v} to ${vHi}`;
      return `${g.l} with ${where}`;
    })
    .join(', ');
}

/** "tolerance 10%" → ["tolerance", "10%"]. */
function splitName(s: string): [string, string] {
  const i = s.lastIndexOf(' ');
  return [s.slice(0, i), s.slice(i + 1)];
}

/** The grid with the run's own value in its place (ascending, no repeat). */
function withOwn(grid: readonly number[], own: number): number[] {
  return [...new Set([...grid, own])].sort((a, b) => a - b);
}

/** A tolerance as a percentage: 0.1 → "10%", 0.075 → "7.5%". */
export function pct(x: number): string {
  return `${round(x * 100, 1)}%`;
}
