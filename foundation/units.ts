/**
 * Units are parsed once, at the edge: the rest of the code sees milliseconds,
 * requests per second and fractions. Each parser returns a value or an error message.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
const bad = (message: string): Parsed<never> => ({ ok: false, message });

/** The shapes the parsers accept, as JSON Schema patterns (so editors check them too). */
export const UNIT_PATTERNS = {
  duration: String.raw`^\s*\d+(?:\.\d+)?\s*(?:ms|s|m|h)\s*$`,
  rate: String.raw`^\s*\d+(?:\.\d+)?\s*(?:/\s*(?:s|m)|%\s*capacity)\s*$`,
  percent: String.raw`^\s*\d+(?:\.\d+)?\s*%\s*$`,
  multiple: String.raw`^\s*\d+(?:\.\d+)?\s*x?\s*$`,
} as const;

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "500ms", "2s", "1.5m", "1h" → milliseconds. Bare numbers are refused: a unit is always written. */
export function parseDuration(input: unknown): Parsed<number> {
  if (typeof input !== 'string')
    return bad(`expected a duration with a unit such as 500ms, 2s or 1m (got ${show(input)})`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$/.exec(input);
  if (!m) return bad(`"${input}" is not a duration; write it like 500ms, 2s, 1m or 1h`);
  return ok(Number(m[1]) * DURATION_UNITS[m[2]!]!);
}

/** A rate as declared: absolute, or a fraction of the lab's capacity. */
export type RateSpec = { readonly perS: number } | { readonly capacityFraction: number };

/** "280/s", "600/m", "70% capacity" → a RateSpec. */
export function parseRate(input: unknown): Parsed<RateSpec> {
  if (typeof input !== 'string')
    return bad(`expected a rate such as 280/s or 70% capacity (got ${show(input)})`);
  let m = /^\s*(\d+(?:\.\d+)?)\s*\/\s*(s|m)\s*$/.exec(input);
  if (m) return ok({ perS: m[2] === 's' ? Number(m[1]) : Number(m[1]) / 60 });
  m = /^\s*(\d+(?:\.\d+)?)\s*%\s*capacity\s*$/.exec(input);
  if (m) return ok({ capacityFraction: Number(m[1]) / 100 });
  return bad(`"${input}" is not a rate; write it like 280/s, 600/m or 70% capacity`);
}

/** "10%" → 0.1 */
export function parsePercent(input: unknown): Parsed<number> {
  if (typeof input !== 'string') return bad(`expected a percentage such as 10% (got ${show(input)})`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(input);
  if (!m) return bad(`"${input}" is not a percentage; write it like 10%`);
  return ok(Number(m[1]) / 100);
}

/** "5x" → 5 */
export function parseMultiple(input: unknown): Parsed<number> {
  if (typeof input !== 'string' && typeof input !== 'number')
    return bad(`expected a multiple such as 5x (got ${show(input)})`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*x?\s*$/.exec(String(input));
  if (!m) return bad(`"${input}" is not a multiple; write it like 5x`);
  return ok(Number(m[1]));
}

export function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms >= 1000) return `${+(ms / 1000).toFixed(3)}s`;
  return `${+ms.toFixed(3)}ms`;
}

function show(v: unknown): string {
  return v === undefined ? 'nothing' : JSON.stringify(v);
}
