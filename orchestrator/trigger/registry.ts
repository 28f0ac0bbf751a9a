import type { TriggerSpec } from '../spec/sections/schedule.js';
import { flushCacheTrigger } from './flushCache.js';
import { partitionTrigger, toxicTrigger } from './link.js';
import type { ToxicSpec } from '../lab/links.js';
import { loadSpikeTrigger } from './loadSpike.js';
import { pauseTrigger } from './pause.js';
import { providerOutageTrigger } from './providerOutage.js';
import { killTrigger, stopTrigger } from './process.js';
import type { Trigger } from './Trigger.js';

type Of<K extends TriggerSpec['kind']> = Extract<TriggerSpec, { kind: K }>;
const ms = (x: number): number => Math.round(x);

/** A toxic of Toxiproxy `type` on the spec's link, with its stream and toxicity. */
function onLink(
  t: { kind: string; link: string; stream: 'downstream' | 'upstream'; toxicity: number },
  name: string,
  type: ToxicSpec['type'],
  attributes: Record<string, number>,
): Trigger {
  return toxicTrigger(t.kind, t.link, { name, type, stream: t.stream, toxicity: t.toxicity, attributes });
}

/**
 * One entry per trigger kind: a new kind is one file plus one line here. `name` makes
 * a toxic's name unique in the run (Toxiproxy names toxics per link).
 */
const triggerKinds: { [K in TriggerSpec['kind']]: (spec: Of<K>, name: string) => Trigger } = {
  pause: (t) => pauseTrigger(t.target),
  kill: (t) => killTrigger(t.target, t.restart),
  stop: (t) => stopTrigger(t.target),
  latency: (t, name) => onLink(t, name, 'latency', { latency: ms(t.latency), jitter: ms(t.jitter) }),
  // Toxiproxy's timeout toxic with timeout 0 holds the data forever: a black hole.
  timeout: (t, name) => onLink(t, name, 'timeout', { timeout: 0 }),
  partition: (t) => partitionTrigger(t.link),
  bandwidth: (t, name) => onLink(t, name, 'bandwidth', { rate: t.rate }),
  'reset-peer': (t, name) => onLink(t, name, 'reset_peer', { timeout: ms(t.timeout) }),
  'slow-close': (t, name) => onLink(t, name, 'slow_close', { delay: ms(t.delay) }),
  'load-spike': (t) => loadSpikeTrigger(t.factor),
  'flush-cache': () => flushCacheTrigger(),
  'provider-outage': (t) => providerOutageTrigger(t.mode, t.slowFactor),
};

/** The trigger of a spec; `index` is its place in the schedule (0-based). */
export function createTrigger(spec: TriggerSpec, index = 0): Trigger {
  const make = triggerKinds[spec.kind] as (s: TriggerSpec, name: string) => Trigger;
  return make(spec, `metabench_${index}_${spec.kind}`);
}
