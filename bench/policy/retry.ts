import type { OutcomeKind } from '../outcome.js';
import type { ClientPolicy } from './ClientPolicy.js';

export type RetryPolicyName = 'none' | 'immediate';

export interface RetryOptions {
  readonly policy: RetryPolicyName;
  /** Attempts in all, the first included. MUST BE >= 1. */
  readonly maxAttempts: number;
}

/** Kinds worth another try: the attempt may succeed if sent again. Never 4xx. */
export function isRetryable(kind: OutcomeKind): boolean {
  switch (kind) {
    case 'timeout':
    case 'conn-refused':
    case 'conn-reset':
    case 'conn-error':
    case 'http-5xx':
    case 'shed':
      return true;
    default:
      return false;
  }
}

/**
 * Sends the origin again after a retryable failure, up to `maxAttempts` in all and
 * never past the origin's deadline. `immediate` re-sends at once: the classic
 * retry-storm client. The result is the last attempt's.
 */
export function retry(opts: RetryOptions): ClientPolicy {
  if (!(opts.maxAttempts >= 1)) throw new RangeError(`maxAttempts must be >= 1 (got ${opts.maxAttempts})`);
  const max = opts.policy === 'none' ? 1 : opts.maxAttempts;
  return (next, env) => async (first, signal) => {
    let r = await next(first, signal);
    for (let n = first.number + 1; n <= max; n++) {
      if (r.kind === 'ok' || !isRetryable(r.kind) || signal.aborted) break;
      if (env.clock.now() >= first.origin.deadlineMs) break;
      r = await next({ origin: first.origin, number: n }, signal);
    }
    return r;
  };
}
