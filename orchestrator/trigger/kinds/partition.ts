import { z } from 'zod';
import { defineTrigger, link, timing } from '../kind.js';
import { partitionTrigger } from '../link.js';

/** A dependency link down (the proxy disabled). */
export const partition = defineTrigger({
  kind: 'partition',
  schema: z.strictObject({ kind: z.literal('partition'), link, ...timing }),
  summary: 'The link is down: connections are refused and open ones closed.',
  acts: 'link',
  target: (t) => `link:${t.link}`,
  describe: (t, d) => `partition of link ${t.link} for ${d}`,
  create: (t) => partitionTrigger(t.link),
});
