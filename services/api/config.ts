import type { DurationDist } from '../../bench/distributions.js';

/**
 * Parses a work distribution flag: `constant:20ms`, `exponential:20ms`,
 * `lognormal:20ms:0.5` (mean, then sigma in log space).
 */
export function parseDurationDist(s: string): DurationDist {
  const [dist, mean, sigma] = s.split(':');
  const meanMs = Number(String(mean).replace(/ms$/, ''));
  if (!(meanMs > 0)) throw new Error(`--work: mean must be a positive number of ms (got "${s}")`);
  if (dist === 'constant' || dist === 'exponential') return { dist, meanMs };
  if (dist === 'lognormal') {
    const sg = Number(sigma);
    if (!(sg > 0)) throw new Error(`--work: lognormal needs a sigma > 0 (got "${s}")`);
    return { dist, meanMs, sigma: sg };
  }
  throw new Error(`--work: unknown distribution "${dist}" (constant, exponential, lognormal)`);
}

export function formatDurationDist(d: DurationDist): string {
  return d.dist === 'lognormal' ? `lognormal:${d.meanMs}ms:${d.sigma}` : `${d.dist}:${d.meanMs}ms`;
}
