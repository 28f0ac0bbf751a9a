import { z } from 'zod';
import { fraction } from '../../../foundation/fields.js';
import { defineTrigger, onLink, timing } from '../kind.js';
import { toxicTrigger } from '../link.js';

/**
 * Message loss on a link: metabench's fault proxy's `loss` toxic (not in Toxiproxy 2.12).
 * Each message is lost with `probability`; under TCP a lost message stalls its
 * connection's direction, so the sender sees only its own timeout.
 */
export const loss = defineTrigger({
  kind: 'loss',
  schema: z.strictObject({
    kind: z.literal('loss'),
    ...onLink,
    /** Probability that each message (request upstream, reply downstream) is lost. */
    probability: fraction.refine((p) => p > 0, 'must be above 0%: a loss of 0% changes nothing'),
    ...timing,
  }),
  summary:
    'Loses each message with a probability; the connection stalls behind the hole and stays open, so the sender sees only its timeout.',
  acts: 'link',
  magnitude: 'probability',
  target: (t) => `link:${t.link}`,
  describe: (t, d) =>
    `${+(t.probability * 100).toFixed(3)}% message loss (${t.stream}) on link ${t.link} for ${d}`,
  // Not onLinkTrigger: it rounds attributes to whole milliseconds, and a probability is a fraction.
  create: (t, name) =>
    toxicTrigger(t.kind, t.link, {
      name,
      type: 'loss',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { probability: t.probability },
    }),
});
