import { z } from 'zod';
import { duration, fraction, positiveDuration } from '../../../foundation/fields.js';
import type { Lab } from '../../lab/Lab.js';
import { defineTrigger, target, timing } from '../kind.js';
import { labWith } from '../labMethods.js';

const able = (lab: Lab) =>
  labWith(lab, ['netem', 'unnetem', 'netemUndoRecipe'], 'has no container interface to put netem on');

/**
 * Packet-level delay and loss on a component's container interface: the kernel's netem qdisc
 * (lab/netem.ts), the Docker runtime only, where the kernel has sch_netem (checked before a
 * run starts). Unlike the link toxics, it acts on packets (TCP retransmits what is lost) and
 * on everything the container sends, to every peer.
 */
export const netem = defineTrigger({
  kind: 'netem',
  schema: z.strictObject({
    kind: z.literal('netem'),
    target,
    /** Delay added to every packet the container sends. */
    delay: positiveDuration(600_000).optional(),
    /** ± this much around the delay. */
    jitter: duration(0, 600_000).default(0),
    /** Probability that each packet the container sends is lost. */
    loss: fraction.refine((p) => p > 0, 'must be above 0%: a loss of 0% changes nothing').optional(),
    ...timing,
  }),
  summary:
    "Packet delay and/or loss on the component's container interface (the kernel's netem qdisc, docker runtime; needs sch_netem).",
  acts: 'interface',
  target: (t) => t.target,
  validate: (t) => [
    ...(t.delay === undefined && t.loss === undefined
      ? [{ field: 'kind', message: 'a netem trigger needs a delay, a loss, or both' }]
      : []),
    ...(t.jitter > 0 && t.delay === undefined
      ? [{ field: 'jitter', message: 'jitter goes with a delay: give delay too' }]
      : []),
  ],
  describe: (t, d) => `netem ${words(t)} on ${t.target} for ${d}`,
  create: (t) => {
    const spec = { delayMs: t.delay, jitterMs: t.jitter, loss: t.loss };
    return {
      kind: 'netem',
      target: t.target,
      describe: () => `netem ${words(t)} on ${t.target}`,
      undoRecipe: (lab) => able(lab).netemUndoRecipe(t.target),
      apply: (lab) => able(lab).netem(t.target, spec),
      undo: (lab) => able(lab).unnetem(t.target),
    };
  },
});

function words(t: { delay?: number | undefined; jitter: number; loss?: number | undefined }): string {
  return [
    t.delay !== undefined ? `delay ${t.delay} ms${t.jitter ? ` ± ${t.jitter} ms` : ''}` : '',
    t.loss !== undefined ? `loss ${+(t.loss * 100).toFixed(3)}%` : '',
  ]
    .filter(Boolean)
    .join(', ');
}
