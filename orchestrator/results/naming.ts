import { createHash } from 'node:crypto';

/**
 * What tells one results folder from another in a listing: the runtime, the scale and, when
 * the command line overrode fields (--set), a short hash of those overrides as written.
 *   sim-s0.34, local-s1-set3f2a
 * The overrides themselves are in each run's manifest.json; the hash only tells two apart.
 */
export function runLabel(r: {
  readonly runtime: string;
  readonly scale: number;
  readonly overrides?: readonly string[] | undefined;
}): string {
  const sets = r.overrides ?? [];
  return `${r.runtime}-s${r.scale}${sets.length > 0 ? `-set${overridesHash(sets)}` : ''}`;
}

/** 4 hex digits of the SHA-256 of the overrides, in order, one per line. */
export function overridesHash(overrides: readonly string[]): string {
  return createHash('sha256').update(overrides.join('\n')).digest('hex').slice(0, 4);
}
