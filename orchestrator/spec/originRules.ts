import { policyModel } from './policies/index.js';
import type { ClientSpec } from './sections/client.js';

/**
 * The rules an experiment's client imposes on one origin, derived once here for the
 * plan, the dry run, the run, the analysis and the models (they used to be re-derived in
 * each, and the dry run's drain differed from the run's).
 */

/** How long the run waits after the schedule for the origins still in flight, beyond the worst one. */
export const DRAIN_MARGIN_MS = 500;

/** The most tries one origin gets: 1 without retries, else retry.maxAttempts (the retry policy's own model). */
export function triesPerOrigin(c: ClientSpec): number {
  return policyModel(c as unknown as Record<string, unknown>).retry.maxAttempts;
}

/**
 * The longest an origin can stay in flight under this client (attempt timeouts plus the
 * waits between them), capped by its deadline. Retry-After can exceed it.
 */
export function worstOriginMs(c: ClientSpec): number {
  const m = policyModel(c as unknown as Record<string, unknown>);
  const tries = m.retry.maxAttempts;
  const b = m.retry.backoff;
  const waitMs = b.kind === 'fixed' ? b.delayMs : b.kind === 'exponential' ? b.capMs : 0;
  const worst = tries * m.timeoutMs + (tries - 1) * waitMs;
  return Math.min(worst, c.deadline ?? Number.POSITIVE_INFINITY);
}

/** The drain after the schedule's end: the run stops sending and waits this long for in-flight origins. */
export function drainMs(c: ClientSpec): number {
  return worstOriginMs(c) + DRAIN_MARGIN_MS;
}
