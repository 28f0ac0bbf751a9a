import { z } from 'zod';
import { duration, fraction, int, multiple, positiveDuration } from '../../../foundation/fields.js';
import { COMPONENTS, parseTarget, type Target } from '../../lab/target.js';

/**
 * schedule and recovery: the phases, the triggers, and the recovery criterion.
 *
 * A schedule has one `trigger` or a list of `triggers`. Each starts `at` an offset from
 * the end of the baseline; without `at` a trigger starts when the previous one ends (a
 * sequence), so overlapping triggers say where they start. The trigger window, whose
 * length D the recovery deadline multiplies, runs from the first start to the last end.
 */
export const TRIGGER_KINDS = [
  'pause',
  'kill',
  'stop',
  'latency',
  'timeout',
  'partition',
  'bandwidth',
  'reset-peer',
  'slow-close',
  'load-spike',
  'flush-cache',
  'provider-outage',
] as const;
/** Components a process trigger acts on (and `api[i]`, one api replica: lab/target.ts). */
export const TRIGGER_TARGETS = COMPONENTS;
/** The api's dependency links (each through the fault proxy), named after the dependency. */
export const LINKS = ['redis', 'postgres', 'llm'] as const;

const timing = {
  /** How long the fault lasts (an instant one: the span the recovery deadline multiplies). */
  duration: positiveDuration(),
  /** Start, as an offset from the end of the baseline; default: when the previous trigger ends. */
  at: duration().optional(),
};
/**
 * A component, or one api replica `api[i]` (0-based); `api` is every replica. Whether
 * replica i exists is checked against lab.api.replicas (schema.ts).
 */
const target = z
  // The pattern is for editors (the JSON Schema); parseTarget says why a target is refused.
  .string()
  .meta({ pattern: '^(api|redis|postgres|llm)(\\[(0|[1-9][0-9]*)\\])?$' })
  .transform((s, ctx): Target => {
    const t = parseTarget(s);
    // An issue raised in a transform stops the checks above it, which read the triggers.
    if ('error' in t) {
      ctx.addIssue({ code: 'custom', message: t.error });
      return z.NEVER;
    }
    return s as Target;
  });
/** What a toxic on a link shares: the link, the direction, and the share of connections hit. */
const onLink = {
  link: z.enum(LINKS),
  /** downstream: the dependency's replies (the default); upstream: what the api sends */
  stream: z.enum(['downstream', 'upstream']).default('downstream'),
  /** Share of the link's connections affected (default 100%). */
  toxicity: fraction.default(1),
};

const trigger = z.discriminatedUnion('kind', [
  /** Freezes the component (SIGSTOP / docker pause): it keeps its sockets and answers nothing. */
  z.strictObject({ kind: z.literal('pause'), target, ...timing }),
  /** SIGKILL: the queue and in-flight work are lost; restarted at the end unless restart: false. */
  z.strictObject({ kind: z.literal('kill'), target, restart: z.boolean().default(true), ...timing }),
  /** Graceful stop (SIGTERM), started again at the end. */
  z.strictObject({ kind: z.literal('stop'), target, ...timing }),
  /** Adds latency (± jitter) to every chunk on the link. */
  z.strictObject({
    kind: z.literal('latency'),
    ...onLink,
    latency: positiveDuration(600_000),
    jitter: duration(0, 600_000).default(0),
    ...timing,
  }),
  /** A black hole: data is held and never delivered, as a lost route looks. */
  z.strictObject({ kind: z.literal('timeout'), ...onLink, ...timing }),
  /** The link is down: connections are refused and open ones closed. */
  z.strictObject({ kind: z.literal('partition'), link: z.enum(LINKS), ...timing }),
  /** Limits the link to `rate` KB/s. */
  z.strictObject({ kind: z.literal('bandwidth'), ...onLink, rate: int(0, 10_000_000), ...timing }),
  /** Resets each connection (TCP RST) `timeout` after its first data. */
  z.strictObject({
    kind: z.literal('reset-peer'),
    ...onLink,
    timeout: duration(0, 600_000).default(0),
    ...timing,
  }),
  /** Delays each connection's close by `delay`. */
  z.strictObject({ kind: z.literal('slow-close'), ...onLink, delay: positiveDuration(600_000), ...timing }),
  /** The offered rate times `factor` for the duration (the open loop's rate; not for a closed loop). */
  z.strictObject({ kind: z.literal('load-spike'), factor: multiple, ...timing }),
  /** Empties the cache (Redis FLUSHALL) at once. */
  z.strictObject({ kind: z.literal('flush-cache'), target: z.literal('redis').default('redis'), ...timing }),
  /**
   * The LLM provider fails through the stub's run-time switch (as a provider's incident
   * does), the process and its link untouched: `unavailable` answers every call 503,
   * `reset` drops every connection, `slow` multiplies its latencies by `slowFactor`.
   */
  z
    .strictObject({
      kind: z.literal('provider-outage'),
      target: z.literal('llm').default('llm'),
      mode: z.enum(['unavailable', 'reset', 'slow']).default('unavailable'),
      slowFactor: z.number().gt(1).max(1000).optional(),
      ...timing,
    })
    .superRefine((t, ctx) => {
      if (t.mode === 'slow' && t.slowFactor === undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['slowFactor'],
          message: 'mode: slow needs slowFactor (e.g. 10)',
        });
      if (t.mode !== 'slow' && t.slowFactor !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['slowFactor'],
          message: `slowFactor is for mode: slow, not ${t.mode}`,
        });
    }),
]);

export type TriggerInput = z.output<typeof trigger>;

/** A trigger placed on the schedule: `atMs` after the end of the baseline. */
export type TriggerSpec = TriggerInput & { readonly atMs: number };

/** Places each trigger: its own `at`, or the end of the previous one. */
function place(list: readonly TriggerInput[]): TriggerSpec[] {
  let prevEnd = 0;
  return list.map((t) => {
    const atMs = t.at ?? prevEnd;
    prevEnd = atMs + t.duration;
    return { ...t, atMs };
  });
}

export const schedule = z
  .strictObject({
    warmup: duration(),
    baseline: positiveDuration(),
    /** One trigger (the common case) … */
    trigger: trigger.optional(),
    /** … or several, in sequence or overlapping. */
    triggers: z.array(trigger).min(1, 'give at least one trigger').max(50).optional(),
    /** How long to keep measuring after the last trigger ends. */
    observe: positiveDuration(),
  })
  .superRefine((s, ctx) => {
    if (s.trigger === undefined && s.triggers === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['trigger'],
        message: 'a schedule needs a trigger (or triggers)',
      });
    if (s.trigger !== undefined && s.triggers !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['triggers'],
        message: 'give either trigger or triggers, not both',
      });
    const first = (s.triggers ?? [])[0];
    if (first && first.at !== undefined && first.at !== 0)
      ctx.addIssue({
        code: 'custom',
        path: ['triggers', 0, 'at'],
        message: 'the first trigger starts when the baseline ends (at: 0s): lengthen the baseline instead',
      });
  })
  .transform(({ trigger: one, triggers, ...rest }) => ({
    ...rest,
    triggers: place(one ? [one] : (triggers ?? [])),
    /** How the file spelled it, so later errors point at the right place. */
    writtenAs: one ? ('trigger' as const) : ('triggers' as const),
  }));

/** The trigger window's length D: from the first start to the last end. */
export function triggerWindowMs(triggers: readonly TriggerSpec[]): number {
  return Math.max(0, ...triggers.map((t) => t.atMs + t.duration));
}

/** What a trigger acts on, for events and reports: a component, a link, or the load. */
export function triggerTarget(t: TriggerInput): string {
  if ('target' in t) return t.target;
  if ('link' in t) return `link:${t.link}`;
  return 'load';
}

export const recovery = z.strictObject({
  /** Recovery deadline as a multiple k of the trigger's duration. */
  within: multiple,
  tolerance: fraction,
  window: positiveDuration(),
  hold: duration(),
});

/** One trigger in words, its duration scaled: "latency 200 ms ± 50 ms on link postgres for 4 s". */
export function describeTrigger(t: TriggerInput, scale = 1): string {
  const sec = (ms: number): string => `${+(ms / 1000).toFixed(3)} s`;
  const d = sec(t.duration * scale);
  switch (t.kind) {
    case 'pause':
    case 'stop':
      return `${t.kind} ${t.target} for ${d}`;
    case 'kill':
      return `kill ${t.target}, ${t.restart ? `restarted after ${d}` : `not restarted (${d} counted as the trigger)`}`;
    case 'latency':
      return `latency ${t.latency} ms${t.jitter ? ` ± ${t.jitter} ms` : ''} on link ${t.link} for ${d}`;
    case 'timeout':
      return `black hole (timeout toxic) on link ${t.link} for ${d}`;
    case 'partition':
      return `partition of link ${t.link} for ${d}`;
    case 'bandwidth':
      return `bandwidth ${t.rate} KB/s on link ${t.link} for ${d}`;
    case 'reset-peer':
      return `connection resets on link ${t.link} for ${d}`;
    case 'slow-close':
      return `closes delayed ${t.delay} ms on link ${t.link} for ${d}`;
    case 'load-spike':
      return `load spike x${t.factor} for ${d}`;
    case 'flush-cache':
      return `flush the cache (counted as ${d})`;
    case 'provider-outage':
      return t.mode === 'slow'
        ? `LLM provider slowed ${t.slowFactor}x for ${d}`
        : `LLM provider down (${t.mode === 'unavailable' ? '503 to every call' : 'every connection reset'}) for ${d}`;
  }
}

/** Every trigger of a schedule in words, with where each starts when there are several. */
export function describeTriggers(list: readonly TriggerSpec[], scale = 1): string {
  if (list.length === 1) return describeTrigger(list[0]!, scale);
  return list
    .map((t) => `${describeTrigger(t, scale)} (from +${+((t.atMs * scale) / 1000).toFixed(3)} s)`)
    .join('; ');
}
