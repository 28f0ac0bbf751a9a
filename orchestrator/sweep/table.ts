import { stringify } from 'csv-stringify/sync';
import { mean } from 'simple-statistics';
import type { RunSummary } from '../analysis/summary.js';
import type { SweepTable, SweepVerdict } from '../report/tables.js';
import type { Design, Factor, SweepPoint } from '../spec/sweepPlan.js';
import { describeInvalid, describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { round } from '../../foundation/round.js';
import type { CtmcBeside } from '../analysis/markov/experiment.js';
import { compareByLevels, type Level } from '../analysis/levels.js';

/** The key figures of each point (the mean over its runs). */
export const SWEEP_FIGURES = [
  { name: 'goodput baseline', unit: 'req/s', of: (s: RunSummary) => s.baseline.goodputPerS },
  { name: 'goodput after', unit: 'req/s', of: (s: RunSummary) => s.afterTrigger.goodputPerS },
  {
    name: 'amplification after',
    unit: 'attempts per origin',
    of: (s: RunSummary) => s.afterTrigger.amplification,
  },
  { name: 'p99 after', unit: 'ms', of: (s: RunSummary) => s.afterTrigger.latencyMs.p99 },
  { name: 'recovery time', unit: 's', of: (s: RunSummary) => s.recoveryTimeS },
  // 1 for a run that recovered (in time or late), 0 for one that did not; its mean is the
  // point's recovered fraction, and a factorial sweep's effects are estimated on it too.
  { name: 'recovered fraction', unit: 'of runs', of: recoveredValue },
] as const;

function recoveredValue(s: RunSummary): number | null {
  if (s.outcome === 'recovered' || s.outcome === 'recovered-late') return 1;
  if (s.outcome === 'metastable' || s.outcome === 'not-recovered') return 0;
  return null;
}

/** One point's outcome: its verdicts over its runs and the mean of each key figure. */
export interface PointResult {
  readonly point: SweepPoint;
  readonly dir: string;
  readonly runs: readonly RunSummary[];
  /** The point's simulated twin (`metabench sweep --twin`): the same runs in virtual time. */
  readonly twin?: readonly RunSummary[];
  /** With a twin: the Markov model's prediction at the point's load and recovery deadline. */
  readonly ctmc?: CtmcBeside;
}

/**
 * A point's metastable verdict over its valid runs (DESIGN.md §2: invalid runs give no
 * verdict): the majority of the valid runs that measured one (a tie counts as metastable:
 * a collapse seen in half the runs is not a recovery); unmeasured when no valid run
 * measured it; invalid when no run was valid.
 */
export function pointVerdict(runs: readonly RunSummary[]): SweepVerdict {
  const valid = runs.filter(isValid);
  if (runs.length > 0 && valid.length === 0) return 'invalid';
  const measured = valid.filter((r) => r.metastable !== null);
  if (measured.length === 0) return 'unmeasured';
  const metastable = measured.filter((r) => r.metastable === true).length;
  return metastable * 2 >= measured.length ? 'metastable' : 'recovered';
}

/**
 * "pass 2/3" per hypothesis metric and window (and request class), over every run of the
 * point: a failing baseline threshold is what makes a run invalid, so it counts here.
 */
export function hypothesisVerdicts(runs: readonly RunSummary[]): Record<string, string> {
  const out: Record<string, string> = {};
  const keys = new Map<string, { pass: number; fail: number; unmeasured: number }>();
  for (const r of runs)
    for (const h of r.hypothesis) {
      const k = `${h.class !== undefined ? `${h.class} ` : ''}${h.metric} ${h.window}`;
      const c = keys.get(k) ?? { pass: 0, fail: 0, unmeasured: 0 };
      c[h.verdict]++;
      keys.set(k, c);
    }
  for (const [k, c] of keys) {
    const n = c.pass + c.fail + c.unmeasured;
    out[k] = (['pass', 'fail', 'unmeasured'] as const)
      .filter((v) => c[v] > 0)
      .map((v) => `${v} ${c[v]}/${n}`)
      .join(', ');
  }
  return out;
}

function meanOf(xs: readonly (number | null)[]): number | null {
  const v = xs.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return v.length ? round(mean(v), 3) : null;
}

function finiteOrNull(x: number | null): number | null {
  return typeof x === 'number' && Number.isFinite(x) ? x : null;
}

function factorValue(v: unknown): string | number {
  return typeof v === 'number' ? v : typeof v === 'string' ? v : JSON.stringify(v);
}

/** sweep.json, in the shape the report draws (orchestrator/report/tables.ts). */
export function sweepTable(
  design: Design,
  factors: readonly Factor[],
  results: readonly PointResult[],
  name?: string,
): SweepTable {
  return {
    ...(name !== undefined ? { name } : {}),
    design: design === 'factorial' ? 'grid' : 'one-at-a-time',
    factors: factors.map((f) => ({
      name: f.path,
      unit: f.values.every((v) => typeof v === 'number') ? 'value' : 'as written',
      ...(f.reference !== undefined ? { reference: factorValue(f.reference) } : {}),
    })),
    figures: SWEEP_FIGURES.map((f) => ({ name: f.name, unit: f.unit })),
    rows: results.map((r) => {
      const valid = r.runs.filter(isValid);
      const t = tallyOutcomes(r.runs);
      return {
        ...(r.point.varied !== undefined ? { varied: r.point.varied } : {}),
        factors: Object.fromEntries(Object.entries(r.point.values).map(([k, v]) => [k, factorValue(v)])),
        figures: Object.fromEntries(SWEEP_FIGURES.map((f) => [f.name, meanOf(valid.map(f.of))])),
        // Each valid run's value, in run order: the report's confidence intervals and effects.
        perRun: Object.fromEntries(
          SWEEP_FIGURES.map((f) => [f.name, valid.map((s) => finiteOrNull(f.of(s)))]),
        ),
        verdict: pointVerdict(r.runs),
        runs: r.runs.length,
        metastableRuns: valid.filter((s) => s.metastable === true).length,
        validRuns: t.valid,
        invalidRuns: t.invalid,
        invalidBecause: t.invalidBecause,
        outcomes: describeTally(t),
      };
    }),
  };
}

interface FlatRow {
  readonly cells: Record<string, string | number | null>;
}

function flatRows(factors: readonly Factor[], results: readonly PointResult[]): FlatRow[] {
  const hypKeys = [...new Set(results.flatMap((r) => Object.keys(hypothesisVerdicts(r.runs))))];
  const twins = results.some((r) => r.twin && r.twin.length > 0);
  return results.map((r) => {
    const hyp = hypothesisVerdicts(r.runs);
    const twin = r.twin && r.twin.length > 0 ? r.twin : undefined;
    const valid = r.runs.filter(isValid);
    const t = tallyOutcomes(r.runs);
    return {
      cells: {
        point: r.point.index,
        varied: r.point.varied ?? (factors.length > 1 && r.point.index === 1 ? 'reference' : ''),
        ...Object.fromEntries(factors.map((f) => [f.path, factorValue(r.point.values[f.path])])),
        runs: r.runs.length,
        verdict: pointVerdict(r.runs),
        // Over the valid runs only; the invalid ones counted apart, with the checks they failed.
        metastable: `${valid.filter((s) => s.metastable === true).length}/${valid.length}`,
        // Beside the lab's verdict, the simulation's of the same point (model vs bench).
        ...(twins
          ? {
              'verdict (simulated)': twin ? pointVerdict(twin) : null,
              'goodput after, simulated (req/s)': twin
                ? meanOf(twin.filter(isValid).map((s) => s.afterTrigger.goodputPerS))
                : null,
              // Recovery times side by side: measured (the figures below), simulated, predicted.
              'recovery time, simulated (s)': twin
                ? meanOf(twin.filter(isValid).map((s) => s.recoveryTimeS))
                : null,
              'recovery time, CTMC (s)': r.ctmc?.recoveryS ?? null,
              'P(recovered within deadline), CTMC': r.ctmc?.pRecoveredWithin ?? null,
            }
          : {}),
        outcomes: describeTally(t),
        invalid: t.invalid > 0 ? `${t.invalid} (${describeInvalid(t)})` : 0,
        ...Object.fromEntries(SWEEP_FIGURES.map((f) => [`${f.name} (${f.unit})`, meanOf(valid.map(f.of))])),
        ...Object.fromEntries(hypKeys.map((k) => [`hypothesis ${k}`, hyp[k] ?? ''])),
        folder: r.dir,
      },
    };
  });
}

/** The points ordered by their factors' levels, the first factor slowest. */
export function sortedByLevels(factors: readonly Factor[], results: readonly PointResult[]): PointResult[] {
  const values = (r: PointResult): Record<string, Level> =>
    Object.fromEntries(factors.map((f) => [f.path, factorValue(r.point.values[f.path])]));
  const cmp = compareByLevels(
    factors.map((f) => f.path),
    results.map(values),
  );
  return [...results].sort((a, b) => cmp(values(a), values(b)));
}

/** sweep.csv: one row per point, its factor values, verdicts and key figures (means over its runs). */
export function sweepCsv(factors: readonly Factor[], results: readonly PointResult[]): string {
  const rows = flatRows(factors, results);
  if (rows.length === 0) return '';
  const columns = Object.keys(rows[0]!.cells);
  return stringify(
    rows.map((r) => columns.map((c) => r.cells[c] ?? '')),
    { header: true, columns },
  );
}

/** sweep.md: the same table for a person. */
export function sweepMarkdown(
  name: string,
  design: Design,
  factors: readonly Factor[],
  results: readonly PointResult[],
): string {
  // Sorted by the factors' levels (numerically where they read as numbers), not in run order.
  const rows = flatRows(factors, sortedByLevels(factors, results));
  const lines = [
    `# Sweep ${name}`,
    '',
    `Design: ${design}${design === 'one-at-a-time' ? ' (the reference point first, then one factor moved at a time)' : ''}; ` +
      `factors: ${factors.map((f) => `${f.path} ∈ {${f.values.map((v) => String(factorValue(v))).join(', ')}}${f.reference !== undefined ? ` (reference ${String(factorValue(f.reference))})` : ''}`).join('; ')}.`,
    'Figures are means over the point\'s valid runs only (docs/metrics.md, Repetitions); invalid runs are counted apart with the validity checks they failed. "After" is the window from the end of the trigger to the end of the observation.',
    '',
  ];
  if (rows.length === 0) return lines.join('\n') + 'No point has finished.\n';
  const columns = Object.keys(rows[0]!.cells);
  const esc = (v: unknown): string => String(v ?? '–').replace(/\|/g, '\\|');
  lines.push(`| ${columns.join(' | ')} |`, `|${columns.map(() => '---').join('|')}|`);
  for (const r of rows)
    lines.push(`| ${columns.map((c) => esc(r.cells[c] === null ? '–' : r.cells[c])).join(' | ')} |`);
  return lines.join('\n') + '\n';
}
