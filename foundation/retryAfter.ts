/**
 * Retry-After (RFC 9110 §10.2.3) in ms: delay-seconds, or an HTTP-date. A date is taken
 * relative to the response's own Date header (both are the server's clock), so no wall
 * clock is read here; a date without a Date header is ignored. Undefined when absent or
 * unreadable.
 */
export function parseRetryAfter(value: string | undefined, date: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  const now = date === undefined ? Number.NaN : Date.parse(date);
  if (Number.isNaN(at) || Number.isNaN(now)) return undefined;
  return Math.max(0, at - now);
}
