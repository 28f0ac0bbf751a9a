import { parseDuration, parsePercent, type Parsed } from '../../foundation/units.js';

export type ThresholdOp = '<=' | '>=' | '<' | '>';
export interface Threshold {
  readonly op: ThresholdOp;
  /** A fraction for goodput and errorRatio, milliseconds for latency metrics. */
  readonly limit: number;
}

/**
 * A steady-state threshold as written in a hypothesis:
 *   goodput: ">= 95% offered"   errorRatio: "<= 1%"   p50|p90|p95|p99|p999|max|ttftP95: "<= 400ms"
 */
export function parseThreshold(metric: string, text: string): Parsed<Threshold> {
  const m = /^\s*(<=|>=|<|>)\s*(.+?)\s*$/.exec(text);
  if (!m)
    return {
      ok: false,
      message: `"${text}" is not a threshold; write it like "<= 400ms" or ">= 95% offered"`,
    };
  const op = m[1] as ThresholdOp;
  const rhs = m[2]!;
  let limit: Parsed<number>;
  if (metric === 'goodput') {
    const g = /^(.+?)\s*offered$/.exec(rhs);
    limit = g
      ? parsePercent(g[1])
      : { ok: false, message: `goodput is judged against the offered load; write it like ">= 95% offered"` };
  } else if (metric === 'errorRatio') {
    limit = parsePercent(rhs);
  } else {
    limit = parseDuration(rhs);
  }
  return limit.ok ? { ok: true, value: { op, limit: limit.value } } : limit;
}
