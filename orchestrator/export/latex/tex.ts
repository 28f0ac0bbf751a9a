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
