import { z } from 'zod';
import { fraction, positiveDuration } from '../../../foundation/fields.js';

/**
 * validity: the limits of the run-validity checks (DESIGN.md §2). Every field is
 * optional; an absent one takes the default below, and the limits in force are
 * recorded in the manifest and in summary.json.
 */
export const validity = z.strictObject({
  /** Check 3: a trigger must take effect within this of its planned time (default 100ms). */
  triggerOnTime: positiveDuration(60_000).optional(),
  /** Check 4: the achieved offered rate per phase within this fraction of plan, or 3 Poisson SDs (default 2%). */
  rateTolerance: fraction.optional(),
  /** Check 4: schedule lag p99 at most this (default max(1ms, S/4, 2% of the attempt timeout)). */
  lagP99: positiveDuration(600_000).optional(),
  /** Check 5: the generator's own CPU in every second, as a share of one core (default 90%). */
  generatorCpu: fraction.optional(),
});

export type ValiditySpec = z.output<typeof validity>;
