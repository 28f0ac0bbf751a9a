import { z } from 'zod';
import { duration, fraction, multiple, positiveDuration } from '../fields.js';

/** schedule and recovery: the phases, the trigger, and the recovery criterion. */
export const TRIGGER_KINDS = ['pause'] as const;
export const TRIGGER_TARGETS = ['api'] as const;

const trigger = z.strictObject({
  kind: z.enum(TRIGGER_KINDS),
  target: z.enum(TRIGGER_TARGETS),
  duration: positiveDuration(),
});

export const schedule = z.strictObject({
  warmup: duration(),
  baseline: positiveDuration(),
  trigger,
  /** How long to keep measuring after the trigger ends. */
  observe: positiveDuration(),
});

export const recovery = z.strictObject({
  /** Recovery deadline as a multiple k of the trigger's duration. */
  within: multiple,
  tolerance: fraction,
  window: positiveDuration(),
  hold: duration(),
});
