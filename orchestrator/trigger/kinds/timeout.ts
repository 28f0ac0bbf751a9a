import { z } from 'zod';
import { defineTrigger, onLink, timing } from '../kind.js';
import { onLinkTrigger } from '../link.js';

/** A black hole on a dependency link. */
export const timeout = defineTrigger({
  kind: 'timeout',
  schema: z.strictObject({ kind: z.literal('timeout'), ...onLink, ...timing }),
  summary: 'A black hole: data is held and never delivered, as a lost route looks.',
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) => `black hole (timeout toxic) on link ${t.link} for ${d}`,
  // Toxiproxy's timeout toxic with timeout 0 holds the data forever: a black hole.
  create: (t, name) => onLinkTrigger(t, name, 'timeout', { timeout: 0 }),
});
