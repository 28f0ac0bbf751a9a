import { z } from 'zod';
import { didYouMean } from '../../foundation/didYouMean.js';
import { int } from '../../foundation/fields.js';
import { client } from './sections/client.js';
import { hypothesis } from './sections/hypothesis.js';
import { apiReplicaCount, lab } from './sections/lab.js';
import { parseTarget, replicaOutOfRange } from '../lab/target.js';
import { apiLinkOutOfRange, parseApiLink } from '../lab/apiLink.js';
import { load } from './sections/load.js';
import { system, systemComponents, systemLinks, type SystemSection } from './sections/system.js';
import { recovery, schedule } from './sections/schedule.js';
import { validity } from './sections/validity.js';
import type { TargetClass, TriggerContext, TriggerIssue } from '../trigger/kind.js';
import { triggerKind } from '../trigger/registry.js';
import { LINKS } from '../trigger/kind.js';

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
    /** The built-in lab … */
    lab: lab.optional(),
    /** … or a system under test metabench did not write (exactly one of the two). */
    system: system.optional(),
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
    if ((e.lab === undefined) === (e.system === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: e.lab === undefined ? [] : ['system'],
        message:
          e.lab === undefined
            ? 'an experiment needs the system under test: lab: (the built-in lab) or system: (your own)'
            : 'give either lab: (the built-in lab) or system: (your own system), not both',
      });
      return;
    }
    const lab = e.lab;
    // A non-fatal issue inside the schedule (a blank command) leaves it untransformed: its own error says why.
    if (!Array.isArray(e.schedule.triggers)) return;
    // A trigger on the cache, the database or their links needs them in the lab (any kind);
    // then each kind's own checks.
    const triggerPath = (i: number): (string | number)[] =>
      e.schedule.writtenAs === 'trigger' ? ['trigger'] : ['triggers', i];
    e.schedule.triggers.forEach((t, i) => {
      const kind = triggerKind(t.kind);
      const at = (field: string, message: string): void =>
        ctx.addIssue({ code: 'custom', path: ['schedule', ...triggerPath(i), field], message });
      if (lab === undefined) {
        systemTriggerIssues(e.system!, t, kind.acts).forEach((x) => at(x.field, x.message));
        return;
      }
      // The built-in lab's components and links, and why another name is none of them.
      const target = 'target' in t ? parseTarget(t.target) : undefined;
      if (target && 'error' in target) return at('target', target.error);
      const apiLink = 'link' in t ? parseApiLink(t.link) : undefined;
      if ('link' in t && !apiLink && !(LINKS as readonly string[]).includes(t.link)) {
        const guess = didYouMean(t.link.replace(/\[.*$/, ''), LINKS);
        return at(
          'link',
          /\[/.test(t.link)
            ? `${t.link}: only the api link has one link per replica (api[i]); write link: ${t.link.replace(/\[.*$/, '')}`
            : `"${t.link}" is not a link of the lab: use one of ${LINKS.join(', ')}${guess ? ` (did you mean "${guess}"?)` : ''}`,
        );
      }
      // link: api[i] names a replica the lab runs; the api link is in the clients' path unless lab.api.link is false.
      if ('link' in t && apiLink) {
        const why = apiLinkOutOfRange(t.link, apiReplicaCount(lab.api));
        if (why) return at('link', why);
        if (lab.api.link === false)
          return at(
            'link',
            `${t.kind} on link ${t.link} needs the clients' link to the api, which lab.api.link: false leaves out: remove lab.api.link or set it to true`,
          );
      }
      const on = target && 'component' in target ? target.component : 'link' in t ? t.link : undefined;
      const field = kind.targetField ?? ('target' in t ? 'target' : 'link');
      // api[i] names a replica the lab runs.
      const outOfRange =
        target && 'component' in target && replicaOutOfRange(target, apiReplicaCount(lab.api));
      if (outOfRange)
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), 'target'],
          message: outOfRange,
        });
      if ((on === 'redis' || on === 'postgres') && !lab.cache)
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), field],
          message: `${t.kind} on ${on} needs a cache in the lab (lab.cache and lab.db)`,
        });
      if (on === 'llm' && !('llm' in lab))
        ctx.addIssue({
          code: 'custom',
          path: ['schedule', ...triggerPath(i), field],
          message: `${t.kind} on llm needs an llm provider in the lab`,
        });
      // The kind's own checks against the lab and the load (a load spike needs a rate to multiply).
      const own = (kind.validate as ((t: unknown, c: TriggerContext) => TriggerIssue[]) | undefined)?.(t, {
        lab,
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
      if (c.cost !== undefined && !lab?.api.costs?.[c.cost])
        ctx.addIssue({
          code: 'custom',
          path: ['load', 'mix', i, 'cost'],
          message: !lab
            ? 'a cost class is a work declared by the built-in lab (lab.api.costs); your own system does its own work: give the class a path instead'
            : `no cost class "${c.cost}" in lab.api.costs${lab.api.costs ? ` (declared: ${Object.keys(lab.api.costs).join(', ')})` : ''}`,
        });
    });
  });

/**
 * What is wrong with a trigger on your own system (empty: nothing). A system given by its url
 * is reached only through its load and the user's commands: metabench started none of its
 * processes and sits on none of its links. A system of processes also takes process triggers
 * on the components it names and link toxics on the links it declares.
 */
function systemTriggerIssues(
  s: SystemSection,
  t: { kind: string; target?: string; link?: string },
  acts: TargetClass,
): TriggerIssue[] {
  if (acts === 'load' || acts === 'host') return [];
  const byUrl = s.url !== undefined;
  if (
    byUrl ||
    acts === 'cache' ||
    acts === 'provider' ||
    acts === 'capacity' ||
    acts === 'cpu' ||
    acts === 'interface'
  ) {
    const what: Partial<Record<TargetClass, string>> = {
      process: "acts on a component's process, which metabench did not start",
      link: 'acts on a dependency link, on which metabench has no fault proxy',
      cache: "flushes the built-in lab's cache",
      provider: "switches the built-in lab's LLM provider",
      capacity: "uses the built-in api's run-time switch (/_api/state)",
      cpu: "sets a CPU quota on a component's process, which metabench did not start",
      interface: 'puts a netem qdisc on a container of the built-in Docker lab',
    };
    return [
      {
        field: 'kind',
        message: `a ${t.kind} trigger ${what[acts] ?? `acts on ${acts}`}: ${
          byUrl
            ? 'a system given by its url takes load triggers (load-spike) and commands (kind: command, with apply and undo)'
            : 'your own system takes process triggers on its components, link toxics on its links, load triggers and commands'
        }`,
      },
    ];
  }
  if (acts === 'process' && t.target !== undefined) {
    const names = systemComponents(s);
    if (names.includes(t.target)) return [];
    const guess = didYouMean(t.target.replace(/\[.*$/, ''), names);
    return [
      {
        field: 'target',
        message: /\[/.test(t.target)
          ? `${t.target}: your own system's components have no replicas; write target: ${t.target.replace(/\[.*$/, '')}`
          : `no component "${t.target}" in ${s.compose ? `the compose file ${s.compose.file}` : 'system.processes'} (declared: ${names.join(', ')})${guess ? `; did you mean "${guess}"?` : ''}`,
      },
    ];
  }
  if (acts === 'link' && t.link !== undefined) {
    const names = systemLinks(s);
    if (names.includes(t.link)) return [];
    // The clients' link to the entry exists in the built-in lab only (not built for your own system).
    if (parseApiLink(t.link))
      return [
        {
          field: 'link',
          message: `link ${t.link} is the built-in lab's link between the clients and its api: for your own system metabench puts no fault proxy between the load and its entry (${s.compose ? 'the compose file' : 'system.entry'}); fault the links it declares (${s.compose ? 'system.compose.links' : 'system.links'}), or use kind: command`,
        },
      ];
    return [
      {
        field: 'link',
        message: names.length
          ? `no link "${t.link}" in ${s.compose ? 'system.compose.links' : 'system.links'} (declared: ${names.join(', ')})`
          : `no link "${t.link}": your own system declares no links (system.links), so metabench has no fault proxy to act through`,
      },
    ];
  }
  return [];
}

/** An experiment as validated: units already in ms, req/s and fractions. */
export type Experiment = z.output<typeof experimentSchema>;
