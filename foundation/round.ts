/**
 * `x` rounded to `digits` decimals, halves up (Math.round): the precision the results,
 * summaries and reports keep, e.g. round(1.23456, 3) = 1.235. Computed as
 * Math.round(x · 10^digits) / 10^digits, so figures stay plain numbers in JSON.
 */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
