import { z } from 'zod';
import { duration } from '../../../foundation/fields.js';
import { defineTrigger, onLink, timing } from '../kind.js';
import { onLinkTrigger } from '../link.js';

/** Toxiproxy's reset_peer toxic on a dependency link. */
export const resetPeer = defineTrigger({
  kind: 'reset-peer',
  schema: z.strictObject({
    kind: z.literal('reset-peer'),
    ...onLink,
    timeout: duration(0, 600_000).default(0),
    ...timing,
  }),
  summary: 'Resets each connection (TCP RST) `timeout` after its first data.',
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) => `connection resets on link ${t.link} for ${d}`,
  create: (t, name) => onLinkTrigger(t, name, 'reset_peer', { timeout: t.timeout }),
});
