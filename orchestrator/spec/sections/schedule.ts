import { z } from 'zod';
import { duration, fraction, multiple, positiveDuration } from '../../../foundation/fields.js';
import { COMPONENTS } from '../../lab/target.js';
import { describeTrigger, triggerSchema, type TriggerInput } from '../../trigger/registry.js';

/**
 * schedule and recovery: the phases, the triggers, and the recovery criterion.
 *
 * A schedule has one `trigger` or a list of `triggers`. Each starts `at` an offset from
 * the end of the baseline; without `at` a trigger starts when the previous one ends (a
 * sequence), so overlapping triggers say where they start. The trigger window, whose
 * length D the recovery deadline multiplies, runs from the first start to the last end.
 */
/** Components a process trigger acts on (and `api[i]`, one api replica: lab/target.ts). */
export const TRIGGER_TARGETS = COMPONENTS;
export { LINKS } from '../../trigger/kind.js';
export { TRIGGER_KINDS, describeTrigger, triggerTarget } from '../../trigger/registry.js';

/** One entry of the schedule: the union of the registered trigger kinds (orchestrator/trigger/registry.ts). */
const trigger = triggerSchema;

export type { TriggerInput };

/** A trigger placed on the schedule: `atMs` after the end of the baseline. */
export type TriggerSpec = TriggerInput & { readonly atMs: number };

/** Places each trigger: its own `at`, or the end of the previous one. */
function place(list: readonly TriggerInput[]): TriggerSpec[] {
  let prevEnd = 0;
  return list.map((t) => {
    const atMs = t.at ?? prevEnd;
    prevEnd = atMs + t.duration;
    return { ...t, atMs };
  });
}

export const schedule = z
  .strictObject({
    warmup: duration(),
    baseline: positiveDuration(),
    /** One trigger (the common case) … */
    trigger: trigger.optional(),
    /** … or several, in sequence or overlapping. */
    triggers: z.array(trigger).min(1, 'give at least one trigger').max(50).optional(),
    /** How long to keep measuring after the last trigger ends. */
    observe: positiveDuration(),
  })
  .superRefine((s, ctx) => {
    if (s.trigger === undefined && s.triggers === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['trigger'],
        message: 'a schedule needs a trigger (or triggers)',
      });
    if (s.trigger !== undefined && s.triggers !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['triggers'],
        message: 'give either trigger or triggers, not both',
      });
    const first = (s.triggers ?? [])[0];
    if (first && first.at !== undefined && first.at !== 0)
      ctx.addIssue({
        code: 'custom',
        path: ['triggers', 0, 'at'],
        message: 'the first trigger starts when the baseline ends (at: 0s): lengthen the baseline instead',
      });
  })
  .transform(({ trigger: one, triggers, ...rest }) => ({
    ...rest,
    triggers: place(one ? [one] : (triggers ?? [])),
    /** How the file spelled it, so later errors point at the right place. */
    writtenAs: one ? ('trigger' as const) : ('triggers' as const),
  }));

/** The trigger window's length D: from the first start to the last end. */
export function triggerWindowMs(triggers: readonly TriggerSpec[]): number {
  return Math.max(0, ...triggers.map((t) => t.atMs + t.duration));
}

export const recovery = z.strictObject({
  /** Recovery deadline as a multiple k of the trigger's duration. */
  within: multiple,
  tolerance: fraction,
  window: positiveDuration(),
  hold: duration(),
});

/** Every trigger of a schedule in words, with where each starts when there are several. */
export function describeTriggers(list: readonly TriggerSpec[], scale = 1): string {
  if (list.length === 1) return describeTrigger(list[0]!, scale);
  return list
    .map((t) => `${describeTrigger(t, scale)} (from +${+((t.atMs * scale) / 1000).toFixed(3)} s)`)
    .join('; ');
}
