import { z } from 'zod';
import { rate } from '../fields.js';

/** load: the open-loop arrival process. */
export const load = z.strictObject({
  arrival: z.enum(['poisson', 'constant']),
  rate,
});
