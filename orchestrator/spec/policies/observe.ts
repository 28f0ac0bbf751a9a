import { clientPolicy } from './kind.js';

/**
 * Not a policy of the client model but a fixed place in the stack: the caller's observer
 * (the Recorder's) sits below the policies that refuse or repeat attempts and above the
 * attempt timeout, so it records each attempt that is actually sent (the amplification
 * counts these).
 */
export const observe = clientPolicy({
  fields: {},
  example: '',
  model: (): object => ({}),
  layer: { at: 60, build: (_m, ctx) => ctx.observe },
});
