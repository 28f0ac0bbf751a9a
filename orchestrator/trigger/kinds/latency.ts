import { z } from 'zod';
import { duration, positiveDuration } from '../../../foundation/fields.js';
import { defineTrigger, onLink, timing } from '../kind.js';
import { onLinkTrigger } from '../link.js';

/** Toxiproxy's latency toxic on a dependency link. */
export const latency = defineTrigger({
  kind: 'latency',
  schema: z.strictObject({
    kind: z.literal('latency'),
    ...onLink,
    latency: positiveDuration(600_000),
    jitter: duration(0, 600_000).default(0),
    ...timing,
  }),
  summary: 'Adds latency (± jitter) to every chunk on the link.',
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) =>
    `latency ${t.latency} ms${t.jitter ? ` ± ${t.jitter} ms` : ''} on link ${t.link} for ${d}`,
  create: (t, name) => onLinkTrigger(t, name, 'latency', { latency: t.latency, jitter: t.jitter }),
});
