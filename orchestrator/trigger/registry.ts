import type { TriggerSpec } from '../spec/sections/schedule.js';
import { flushCacheTrigger } from './flushCache.js';
import { partitionTrigger, toxicTrigger } from './link.js';
import { loadSpikeTrigger } from './loadSpike.js';
import { pauseTrigger } from './pause.js';
import { killTrigger, stopTrigger } from './process.js';
import type { Trigger } from './Trigger.js';

type Of<K extends TriggerSpec['kind']> = Extract<TriggerSpec, { kind: K }>;
const ms = (x: number): number => Math.round(x);

/**
 * One entry per trigger kind: a new kind is one file plus one line here. `name` makes
 * a toxic's name unique in the run (Toxiproxy names toxics per link).
 */
const triggerKinds: { [K in TriggerSpec['kind']]: (spec: Of<K>, name: string) => Trigger } = {
  pause: (t) => pauseTrigger(t.target),
  kill: (t) => killTrigger(t.target, t.restart),
  stop: (t) => stopTrigger(t.target),
  latency: (t, name) =>
    toxicTrigger('latency', t.link, {
      name,
      type: 'latency',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { latency: ms(t.latency), jitter: ms(t.jitter) },
    }),
  // Toxiproxy's timeout toxic with timeout 0 holds the data forever: a black hole.
  timeout: (t, name) =>
    toxicTrigger('timeout', t.link, {
      name,
      type: 'timeout',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { timeout: 0 },
    }),
  partition: (t) => partitionTrigger(t.link),
  bandwidth: (t, name) =>
    toxicTrigger('bandwidth', t.link, {
      name,
      type: 'bandwidth',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { rate: t.rate },
    }),
  'reset-peer': (t, name) =>
    toxicTrigger('reset-peer', t.link, {
      name,
      type: 'reset_peer',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { timeout: ms(t.timeout) },
    }),
  'slow-close': (t, name) =>
    toxicTrigger('slow-close', t.link, {
      name,
      type: 'slow_close',
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { delay: ms(t.delay) },
    }),
  'load-spike': (t) => loadSpikeTrigger(t.factor),
  'flush-cache': () => flushCacheTrigger(),
};

/** The trigger of a spec; `index` is its place in the schedule (0-based). */
export function createTrigger(spec: TriggerSpec, index = 0): Trigger {
  const make = triggerKinds[spec.kind] as (s: TriggerSpec, name: string) => Trigger;
  return make(spec, `metabench_${index}_${spec.kind}`);
}
