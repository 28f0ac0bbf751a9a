import { z } from 'zod';
import { duration, fraction, multiple, positiveDuration } from '../fields.js';

/** schedule and recovery: the phases, the trigger, and the recovery criterion. */
export const TRIGGER_KINDS = ['pause', 'flush-cache'] as const;
export const TRIGGER_TARGETS = ['api', 'redis', 'postgres'] as const;

const trigger = z
  .strictObject({
    kind: z.enum(TRIGGER_KINDS),
    /** pause: api, redis or postgres; flush-cache: redis (the default) */
    target: z.enum(TRIGGER_TARGETS).optional(),
    /** pause: how long it lasts; flush-cache (instant): the span the recovery deadline is a multiple of */
    duration: positiveDuration(),
  })
  .superRefine((t, ctx) => {
    if (t.kind === 'pause' && t.target === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['target'],
        message: 'pause needs a target: api, redis or postgres',
      });
    if (t.kind === 'flush-cache' && t.target !== undefined && t.target !== 'redis')
      ctx.addIssue({ code: 'custom', path: ['target'], message: 'flush-cache acts on redis' });
  })
  .transform((t) => ({ ...t, target: t.target ?? ('redis' as const) }));

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
