import { z } from 'zod';
import { int } from '../../../foundation/fields.js';
import { defineTrigger, onLink, timing } from '../kind.js';
import { onLinkTrigger } from '../link.js';

/** Toxiproxy's bandwidth toxic on a dependency link. */
export const bandwidth = defineTrigger({
  kind: 'bandwidth',
  schema: z.strictObject({ kind: z.literal('bandwidth'), ...onLink, rate: int(0, 10_000_000), ...timing }),
  summary: 'Limits the link to `rate` KB/s.',
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) => `bandwidth ${t.rate} KB/s on link ${t.link} for ${d}`,
  create: (t, name) => onLinkTrigger(t, name, 'bandwidth', { rate: t.rate }),
});
