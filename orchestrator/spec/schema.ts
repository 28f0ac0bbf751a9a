import { z } from 'zod';
import { didYouMean } from '../../foundation/didYouMean.js';
import { int } from '../../foundation/fields.js';
import { client } from './sections/client.js';
import { hypothesis } from './sections/hypothesis.js';
import { apiReplicaCount, lab } from './sections/lab.js';
import { parseTarget, replicaOutOfRange } from '../lab/target.js';
import { load } from './sections/load.js';
import { recovery, schedule } from './sections/schedule.js';
import { validity } from './sections/validity.js';
import type { TriggerContext, TriggerIssue } from '../trigger/kind.js';
import { triggerKind } from '../trigger/registry.js';

export { HYPOTHESIS_METRICS } from './sections/hypothesis.js';
export { TRIGGER_KINDS, TRIGGER_TARGETS } from './sections/schedule.js';

/**
 * The experiment file's schema, one file per section under sections/. Objects are
 * strict (an unknown key is an error, with a did-you-mean), units are parsed at the
 * edge (fields.ts), and every limit is stated so a typo or an absurd value is refused
 * before anything starts.
 */
export const experimentSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,79}$/, 'use lower-case letters, digits, ".", "_" and "-" (at most 80)'),
    description: z.string().max(2000).optional(),
    lab,
    load,
    client,
    hypothesis: hypothesis.default({}),
    schedule,
    recovery,
    /** Limits of the run-validity checks (DESIGN.md §2); every one has a default. */
    validity: validity.optional(),
    repeat: int(1, 1000).default(1),
    seed: int(0, 2 ** 32 - 1).default(1),
  })
  .superRefine((e, ctx) => {
    // A trigger on the cache, the database or their links needs them in the lab (any kind);
    // then each kind's own checks.
    const triggerPath = (i: number): (string | number)[] =>
      e.schedule.writtenAs === 'trigger' ? ['trigger'] : ['triggers', i];
    e.schedule.triggers.forEach((t, i) => {
      const kind = triggerKind(t.kind);
      const target = 'target' in t ? parseTarget(t.target) : undefined;
      const on = target && 'component' in target ? target.component : 'link' in t ? t.link : undefined;
      const field = kind.targetField ?? ('target' in t ? 'target' : 'link');
      // api[i] names a replica the lab runs.
      const outOfRange =
        target && 'component' in target && replicaOutOfRange(target, apiReplicaCount(e.lab.api));
      if (outOfRange)
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), 'target'],
          message: outOfRange,
        });
      if ((on === 'redis' || on === 'postgres') && !e.lab.cache)
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), field],
          message: `${t.kind} on ${on} needs a cache in the lab (lab.cache and lab.db)`,
        });
      if (on === 'llm' && !('llm' in e.lab))
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), field],
          message: `${t.kind} on llm needs an llm provider in the lab`,
        });
      // The kind's own checks against the lab and the load (a load spike needs a rate to multiply).
      const own = (kind.validate as ((t: unknown, c: TriggerContext) => TriggerIssue[]) | undefined)?.(t, {
        lab: e.lab,
        load: e.load,
      });
      for (const issue of own ?? [])
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), issue.field],
          message: issue.message,
        });
    });
    // Per-class thresholds name request classes of the mix.
    const classes = e.load.mix?.map((c) => c.name) ?? [];
    for (const name of Object.keys(e.hypothesis.classes ?? {})) {
      if (classes.includes(name)) continue;
      const guess = didYouMean(name, classes);
      ctx.addIssue({
        code: 'custom',
        path: ['hypothesis', 'classes', name],
        message: classes.length
          ? `no request class "${name}" in load.mix${guess ? `; did you mean "${guess}"?` : ` (declared: ${classes.join(', ')})`}`
          : `per-class thresholds need request classes: declare load.mix (no class "${name}")`,
      });
    }
    // A request class may only ask for a cost class the api declares.
    e.load.mix?.forEach((c, i) => {
      if (c.cost !== undefined && !e.lab.api.costs?.[c.cost])
        ctx.addIssue({
          code: 'custom',
          path: ['load', 'mix', i, 'cost'],
          message: `no cost class "${c.cost}" in lab.api.costs${e.lab.api.costs ? ` (declared: ${Object.keys(e.lab.api.costs).join(', ')})` : ''}`,
        });
    });
  });

/** An experiment as validated: units already in ms, req/s and fractions. */
export type Experiment = z.output<typeof experimentSchema>;
