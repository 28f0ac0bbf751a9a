import { z } from 'zod';
import { positiveDuration } from '../../../foundation/fields.js';
import { defineTrigger, onLink, timing } from '../kind.js';
import { onLinkTrigger } from '../link.js';

/** Toxiproxy's slow_close toxic on a dependency link. */
export const slowClose = defineTrigger({
  kind: 'slow-close',
  schema: z.strictObject({
    kind: z.literal('slow-close'),
    ...onLink,
    delay: positiveDuration(600_000),
    ...timing,
  }),
  summary: "Delays each connection's close by `delay`.",
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) => `closes delayed ${t.delay} ms on link ${t.link} for ${d}`,
  create: (t, name) => onLinkTrigger(t, name, 'slow_close', { delay: t.delay }),
});
