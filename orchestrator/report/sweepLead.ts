import { compareByLevels, sortedLevels, type Level } from '../analysis/levels.js';
import type { SweepTable, SweepVerdict } from './tables.js';

/**
 * The first lines of a sweep's report: the sweep's own result, not its first point's. The
 * verdicts counted over the points, the boundary each factor crossed (the levels between
 * which the verdict turns from recovered to metastable), each point's outcome, and the
 * invalid points with what to do about them.
 */

type Row = SweepTable['rows'][number];

/** A boundary: two neighbouring levels of a factor (the others held) whose valid verdicts differ. */
export interface Boundary {
  readonly factor: string;
  /** The other factors' levels it was found at (a grid: the second factor's level); empty one-at-a-time. */
  readonly at: Readonly<Record<string, Level>>;
  readonly below: { readonly level: Level; readonly verdict: SweepVerdict };
  readonly above: { readonly level: Level; readonly verdict: SweepVerdict };
  /** Levels in between with no verdict (invalid or unmeasured points). */
  readonly between: readonly Level[];
}

const JUDGED = new Set<SweepVerdict>(['metastable', 'recovered']);

/** The points along one factor, the other factors held, in the order of its levels. */
function lines(t: SweepTable): { factor: string; at: Record<string, Level>; rows: Row[] }[] {
  const out: { factor: string; at: Record<string, Level>; rows: Row[] }[] = [];
  if (t.design === 'one-at-a-time') {
    for (const f of t.factors) {
      const rows =
        t.factors.length === 1 ? t.rows : t.rows.filter((r) => r.varied === f.name || r.varied === undefined);
      out.push({ factor: f.name, at: {}, rows: byLevel(rows, f.name) });
    }
    return out;
  }
  // A grid: along each factor, one line per combination of the others' levels.
  for (const f of t.factors) {
    const others = t.factors.filter((g) => g.name !== f.name).map((g) => g.name);
    const groups = new Map<string, Row[]>();
    for (const r of t.rows) {
      const k = JSON.stringify(others.map((o) => r.factors[o]));
      groups.set(k, [...(groups.get(k) ?? []), r]);
    }
    const keys = [...groups.keys()].sort((a, b) =>
      compareByLevels(
        others,
        t.rows.map((r) => r.factors),
      )(groups.get(a)![0]!.factors, groups.get(b)![0]!.factors),
    );
    for (const k of keys) {
      const rows = groups.get(k)!;
      out.push({
        factor: f.name,
        at: Object.fromEntries(others.map((o) => [o, rows[0]!.factors[o]!])),
        rows: byLevel(rows, f.name),
      });
    }
  }
  return out;
}

function byLevel(rows: readonly Row[], factor: string): Row[] {
  const order = sortedLevels(rows.map((r) => r.factors[factor]));
  return [...rows].sort((a, b) => order.indexOf(a.factors[factor]!) - order.indexOf(b.factors[factor]!));
}

/** Every place a factor's verdict changes between neighbouring judged levels (invalid and unmeasured points skipped, and named). */
export function sweepBoundaries(t: SweepTable): Boundary[] {
  const out: Boundary[] = [];
  for (const l of lines(t)) {
    let last: Row | null = null;
    let between: Level[] = [];
    for (const r of l.rows) {
      if (!JUDGED.has(r.verdict)) {
        if (last) between.push(r.factors[l.factor]!);
        continue;
      }
      if (last && last.verdict !== r.verdict)
        out.push({
          factor: l.factor,
          at: l.at,
          below: { level: last.factors[l.factor]!, verdict: last.verdict },
          above: { level: r.factors[l.factor]!, verdict: r.verdict },
          between,
        });
      last = r;
      between = [];
    }
  }
  return out;
}

function describeValues(f: Readonly<Record<string, Level>>): string {
  return Object.entries(f)
    .map(([k, v]) => `${k} = ${v}`)
    .join(', ');
}

/** "load.rate: recovered at 60% capacity, metastable from 70% capacity (no verdict at 65%: invalid)". */
export function describeBoundary(b: Boundary): string {
  const at = Object.keys(b.at).length > 0 ? ` at ${describeValues(b.at)}` : '';
  return (
    `${b.factor}${at}: ${b.below.verdict} at ${b.below.level}, ${b.above.verdict} from ${b.above.level}` +
    (b.between.length > 0 ? ` (no verdict in between, at ${b.between.join(', ')})` : '')
  );
}

/** The sweep's own result, in the lines that open its report. */
export function sweepLead(t: SweepTable): string[] {
  const names = t.factors.map((f) => f.name);
  const cmp = compareByLevels(
    names,
    t.rows.map((r) => r.factors),
  );
  const rows = [...t.rows].sort((a, b) => cmp(a.factors, b.factors));
  const count = (v: SweepVerdict) => rows.filter((r) => r.verdict === v).length;
  const counts = (['metastable', 'recovered', 'unmeasured', 'invalid'] as const)
    .filter((v) => count(v) > 0)
    .map((v) => `${v} ${count(v)}`)
    .join(', ');
  const invalidPoints = rows.filter((r) => r.verdict === 'invalid');
  const partly = rows.filter((r) => r.verdict !== 'invalid' && (r.invalidRuns ?? 0) > 0);
  const boundaries = sweepBoundaries(t);
  const judged = rows.filter((r) => JUDGED.has(r.verdict));
  const out = [
    `**Sweep of ${rows.length} point${rows.length === 1 ? '' : 's'}: ${counts || 'none finished'}.**`,
    '',
  ];
  if (boundaries.length > 0)
    out.push(
      `Boundar${boundaries.length === 1 ? 'y' : 'ies'} found (where the verdict changes between neighbouring levels):`,
      '',
      ...boundaries.map((b) => `- ${describeBoundary(b)}`),
      '',
    );
  else if (judged.length > 0) {
    const only = [...new Set(judged.map((r) => r.verdict))];
    out.push(
      only.length === 1
        ? `No boundary found: every point with a verdict is ${only[0]}; widen the factors' ranges to find where it changes.`
        : 'No boundary found between neighbouring levels.',
      '',
    );
  }
  out.push(
    ...rows.map(
      (r) =>
        `- ${describeValues(r.factors)}: **${r.verdict}**${r.outcomes !== undefined ? ` (${r.outcomes})` : ''}`,
    ),
    '',
  );
  if (invalidPoints.length > 0 || partly.length > 0)
    out.push(
      [
        invalidPoints.length > 0
          ? `${invalidPoints.length} point${invalidPoints.length === 1 ? ' is' : 's are'} invalid (no valid run, so no verdict), drawn as such in the figures: ${invalidPoints.map((r) => describeValues(r.factors)).join('; ')}.`
          : '',
        partly.length > 0
          ? `${partly.length} point${partly.length === 1 ? ' has' : 's have'} invalid runs beside valid ones (their figures cover the valid runs).`
          : '',
        "`metabench sweep FILE --resume DIR --rerun-invalid` re-runs only the invalid runs; each point's report says why its runs were invalid and what else to do.",
      ]
        .filter((x) => x !== '')
        .join(' '),
      '',
    );
  return out;
}
