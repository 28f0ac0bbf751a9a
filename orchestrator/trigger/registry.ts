import type { Experiment } from '../spec/schema.js';
import { flushCacheTrigger } from './flushCache.js';
import { pauseTrigger } from './pause.js';
import type { Trigger } from './Trigger.js';

type TriggerSpec = Experiment['schedule']['trigger'];

/** One entry per trigger kind: a new kind is one file plus one line here. */
const triggerKinds = {
  pause: (spec: TriggerSpec) => pauseTrigger(spec.target),
  'flush-cache': () => flushCacheTrigger(),
} satisfies Record<TriggerSpec['kind'], (spec: TriggerSpec) => Trigger>;

export function createTrigger(spec: TriggerSpec): Trigger {
  return triggerKinds[spec.kind](spec);
}
