import { sig3 } from '../../report/numbers.js';

/** Characters LaTeX would read as commands or cannot set from utf8, as it sets them. */
const SPECIAL: Record<string, string> = {
  '\\': '\\textbackslash{}',
  '#': '\\#',
  $: '\\$',
  '%': '\\%',
  '&': '\\&',
  _: '\\_',
  '{': '\\{',
  '}': '\\}',
  '~': '\\textasciitilde{}',
  '^': '\\textasciicircum{}',
  // pdflatex's default (OT1) text font sets < > | as other glyphs.
  '<': '\\textless{}',
  '>': '\\textgreater{}',
  '|': '\\textbar{}',
  '×': '$\\times$',
  '±': '$\\pm$',
  '≥': '$\\geq$',
  '≤': '$\\leq$',
  '→': '$\\rightarrow$',
  '‘': "'",
  '’': "'",
  '“': '"',
  '”': '"',
  '–': '--',
  '—': '---',
  '−': '$-$',
  '·': '$\\cdot$',
  '…': '\\ldots{}',
  π: '$\\pi$',
  '∞': '$\\infty$',
  '≈': '$\\approx$',
  µ: '$\\mu$',
};

/** Text as LaTeX reads it literally, in one pass (an escape is never escaped again). */
export function tex(s: string): string {
  return s.replace(
    /[\\#$%&_{}~^<>|×±≥≤→‘’“”–—−·…π∞≈µ]|[^\t\n\r -\u00FF]/gu,
    (c) =>
      // Anything else pdflatex's utf8 cannot set is named, not a compile error.
      SPECIAL[c] ?? `[U+${c.codePointAt(0)!.toString(16).toUpperCase()}]`,
  );
}

/** A measured value to three significant figures as siunitx prints it; "--" when unmeasured. */
export function num(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '--' : `\\num{${sig3(x, false)}}`;
}

/**
 * The decimals one column of seconds is printed with, so its values read alike ("90.0 / 100.0",
 * never "90.0 / 100"): one, or two or three when the smallest non-zero value is under 1 s or
 * 0.1 s (a scaled-down run), so that it keeps two significant figures.
 */
export function secondsDecimals(values: readonly (number | null | undefined)[]): number {
  const small = Math.min(
    ...values
      .filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v !== 0)
      .map(Math.abs),
  );
  return small >= 1 ? 1 : small >= 0.1 ? 2 : 3;
}

/** A number with a fixed count of decimals (one precision down a column); "--" when unmeasured. */
export function fixed(x: number | null | undefined, decimals: number): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '--' : `\\num{${x.toFixed(decimals)}}`;
}

/** An exact count (samples, runs): every digit. */
export function count(x: number | null | undefined): string {
  return x === null || x === undefined ? '--' : `\\num{${x}}`;
}

/** A value with its unit, `\SI{…}{…}` (siunitx), three significant figures. */
export function si(x: number, unit: string): string {
  return `\\SI{${sig3(x, false)}}{${unit}}`;
}

/** A declared value (a setting, not a measurement) with its unit, every digit it has. */
export function exact(x: number, unit: string): string {
  return `\\SI{${+x.toFixed(6)}}{${unit}}`;
}

/** A declared duration in ms, in seconds when it is one or more. */
export function duration(ms: number): string {
  return ms >= 1000 ? exact(ms / 1000, '\\second') : exact(ms, '\\milli\\second');
}
