import type { SweepTable } from '../report/tables.js';

/**
 * Markdown made plain for a terminal: `**x**` and `` `x` `` lose their markers, and a
 * markdown table becomes aligned columns (its `|---|` rule a line of dashes). report.md
 * keeps the markdown; what reaches the terminal never shows literal asterisks or pipes.
 */
export function plainLines(lines: readonly string[]): string[] {
  const out: string[] = [];
  let table: string[][] = [];
  const flush = (): void => {
    if (table.length === 0) return;
    const widths = table[0]!.map((_, c) => Math.max(...table.map((r) => [...(r[c] ?? '')].length)));
    for (const r of table)
      out.push(
        r[0] === '\u0000'
          ? widths.map((w) => '-'.repeat(w)).join('  ')
          : r
              .map((cell, c) => cell.padEnd(widths[c] ?? 0))
              .join('  ')
              .trimEnd(),
      );
    table = [];
  };
  for (const line of lines) {
    const t = line.trim();
    if (t.startsWith('|') && t.endsWith('|')) {
      const cells = t
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => plainInline(c.trim()));
      table.push(cells.every((c) => /^:?-+:?$/.test(c)) ? ['\u0000'] : cells);
      continue;
    }
    flush();
    out.push(plainInline(line));
  }
  flush();
  return out;
}

function plainInline(s: string): string {
  return s
    .replace(/\*\*(.+?)\*\*/g, '$1')
    .replace(/`([^`]*)`/g, '$1')
    .replace(/\\\|/g, '|')
    .replace(/\\\\/g, '\\');
}

/**
 * One progress line of `metabench model`'s map: which point, its verdict, what each
 * number is (the recovery time after the trigger when it recovered, the goodput after
 * it otherwise) and how long the simulation took on the wall clock.
 */
export function mapProgressLine(
  done: number,
  total: number,
  row: SweepTable['rows'][number],
  wallMs: number,
): string {
  const f = row.figures;
  const recovery = f['recovery time'];
  const after =
    row.verdict === 'recovered' && recovery !== null && recovery !== undefined
      ? `recovered ${recovery} s after the trigger`
      : `${row.verdict}${f['goodput after'] !== null && f['goodput after'] !== undefined ? `, goodput after the trigger ${f['goodput after']}/s` : ''}`;
  // The second axis: the trigger's duration, or (model --magnitudes) its magnitude.
  const [, y] = Object.entries(row.factors).filter(([k]) => k !== 'offered load')[0] ?? [];
  const second =
    'trigger duration' in row.factors
      ? `trigger ${row.factors['trigger duration']} s`
      : `${Object.keys(row.factors).find((k) => k !== 'offered load') ?? 'magnitude'} ${y}`;
  return `  point ${done}/${total}: offered load ${row.factors['offered load']}/s, ${second} → ${after} (simulated in ${(wallMs / 1000).toFixed(1)} s of wall time)`;
}
