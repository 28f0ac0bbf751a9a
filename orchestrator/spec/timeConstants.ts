import { PG_RECONNECT_MS } from '../../services/api/dbPool.js';
import type { Experiment } from './schema.js';
import { triggerTarget } from './sections/schedule.js';

/**
 * The time constants `--scale` does not shrink (DESIGN.md §2 "Scale"): the system's own
 * clocks (client timeout and retry waits, breaker windows, the api's request timeout,
 * TTLs, reconnect intervals) and the analysis's (the goodput bucket, the trend test's
 * shortest tail). A scaled duration compared with one of them is what orchestrator/spec/
 * scaleLimits.ts checks.
 */
export interface TimeConstant {
  /** What it is, in words. */
  readonly name: string;
  readonly ms: number;
  /** Where it comes from: the file's field (dotted), or the source that fixes it. */
  readonly from: string;
}

/** The goodput series' bucket: recovery windows are judged on whole seconds (analysis/series.ts). */
export const GOODPUT_BUCKET_MS = 1000;
/** The trend test's shortest tail (analysis/outcome.ts MIN_TREND_S; a test checks they agree). */
export const MIN_TREND_MS = 10_000;

/** Whether the client acts on a timed-out attempt (retries it, counts it against a breaker, a budget or a throttle). */
export function clientReactsToTimeouts(e: Experiment): boolean {
  const c = e.client;
  return c.retry.policy !== 'none' || Boolean(c.breaker) || Boolean(c.budget) || Boolean(c.throttle);
}

/** The longest wait between two tries of an origin (0 without retries). */
export function longestRetryWaitMs(e: Experiment): number {
  const r = e.client.retry;
  if (r.policy === 'fixed') return r.delay ?? 0;
  if (r.policy === 'exponential') return r.cap ?? 0;
  return 0;
}

/**
 * The longest an origin can last: every try timing out, with the longest wait before
 * each retry, bounded by its deadline.
 */
export function originLifeMs(e: Experiment): number {
  const c = e.client;
  const tries = c.retry.policy === 'none' ? 1 : c.retry.maxAttempts;
  const life = tries * c.timeout + (tries - 1) * longestRetryWaitMs(e);
  return Math.min(life, c.deadline ?? Number.POSITIVE_INFINITY);
}

/** Every non-scaling time constant the experiment has, the analysis's included. */
export function timeConstants(e: Experiment): TimeConstant[] {
  const c = e.client;
  // Your own system (system:) declares none of its own: only the client's and the analysis's.
  const lab = e.lab;
  const api = lab?.api;
  const out: TimeConstant[] = [{ name: 'client timeout', ms: c.timeout, from: 'client.timeout' }];
  if (c.deadline !== undefined)
    out.push({ name: 'client deadline', ms: c.deadline, from: 'client.deadline' });
  if (c.retry.policy === 'fixed' && c.retry.delay !== undefined)
    out.push({ name: 'retry delay', ms: c.retry.delay, from: 'client.retry.delay' });
  if (c.retry.policy === 'exponential') {
    if (c.retry.base !== undefined)
      out.push({ name: 'backoff base', ms: c.retry.base, from: 'client.retry.base' });
    if (c.retry.cap !== undefined)
      out.push({ name: 'backoff cap', ms: c.retry.cap, from: 'client.retry.cap' });
  }
  if (c.retry.policy !== 'none')
    out.push({
      name: 'longest origin (every try timing out)',
      ms: originLifeMs(e),
      from: 'client.timeout × client.retry.maxAttempts + retry waits',
    });
  if (c.hedge) out.push({ name: 'hedge delay', ms: c.hedge.delay, from: 'client.hedge.delay' });
  if (c.breaker) {
    out.push({ name: 'breaker window', ms: c.breaker.window, from: 'client.breaker.window' });
    out.push({ name: 'breaker open time', ms: c.breaker.open, from: 'client.breaker.open' });
  }
  if (c.throttle)
    out.push({ name: 'throttle window', ms: c.throttle.window, from: 'client.throttle.window' });
  if (c.abandon)
    out.push({ name: 'mean patience', ms: c.abandon.patience.mean, from: 'client.abandon.patience.mean' });
  if (api?.requestTimeout !== undefined)
    out.push({ name: 'api request timeout', ms: api.requestTimeout, from: 'lab.api.requestTimeout' });
  if (api?.shed?.policy === 'queue-time')
    out.push({ name: 'shed queue-time limit', ms: api.shed.limit, from: 'lab.api.shed.limit' });
  if (api?.shed?.policy === 'codel')
    out.push({ name: 'CoDel interval', ms: api.shed.interval, from: 'lab.api.shed.interval' });
  if (lab?.cache) out.push({ name: 'cache TTL', ms: lab.cache.ttl, from: 'lab.cache.ttl' });
  if (lab?.db)
    out.push({
      name: 'database pool reconnect interval',
      ms: PG_RECONNECT_MS,
      from: 'services/api/dbPool.ts PG_RECONNECT_MS',
    });
  if (lab?.llm) {
    out.push({ name: 'provider timeout', ms: lab.llm.timeout, from: 'lab.llm.timeout' });
    out.push({ name: 'provider backoff cap', ms: lab.llm.retry.cap, from: 'lab.llm.retry.cap' });
  }
  out.push({ name: 'goodput bucket', ms: GOODPUT_BUCKET_MS, from: 'the analysis (whole-second buckets)' });
  out.push({
    name: 'shortest trend tail',
    ms: MIN_TREND_MS,
    from: "the analysis (the outcome's trend test reads at least 10 s)",
  });
  return out;
}

/** Which of the constants a trigger acts through, so it must outlast them (scaleLimits.ts says by how much). */
export function constantsTriggerOutlasts(
  e: Experiment,
  t: Experiment['schedule']['triggers'][number],
): TimeConstant[] {
  const all = timeConstants(e);
  const by = (from: string): TimeConstant[] => all.filter((c) => c.from === from);
  const on = triggerTarget(t);
  return [
    ...by('lab.api.requestTimeout'),
    ...(clientReactsToTimeouts(e) ? by('client.timeout') : []),
    ...by('client.retry.delay'),
    ...by('client.retry.cap'),
    ...by('client.hedge.delay'),
    ...(on === 'llm' || on === 'link:llm' ? [...by('lab.llm.timeout'), ...by('lab.llm.retry.cap')] : []),
    ...(on === 'postgres' || on === 'link:postgres' ? by('services/api/dbPool.ts PG_RECONNECT_MS') : []),
  ];
}
