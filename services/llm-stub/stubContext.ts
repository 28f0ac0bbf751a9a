import { randomBytes } from 'node:crypto';
import type { FaultRates } from './faults.js';
import type { StubMetrics } from './metrics.js';
import type { StubOutcome } from './outcomes.js';
import type { Profile } from './profile.js';
import type { RateWindow } from './rateWindow.js';
import { resetString } from './wire.js';

/** What can be switched while the stub runs (PUT /_stub/state), e.g. by a trigger. */
export interface StubState {
  /** The whole provider down: `reset` destroys every connection, `unavailable` answers 503. */
  down: false | 'reset' | 'unavailable';
  /** The whole provider slow: multiplies every TTFT, token gap, error delay and embedding time. */
  slowFactor: number;
  rates: FaultRates;
}

/** What every route reads: the seed and profile, the switchable state, the metrics, the rate-limit window. */
export interface StubContext {
  readonly seed: number;
  readonly profile: Profile;
  readonly state: StubState;
  readonly metrics: StubMetrics;
  readonly window: RateWindow;
}

/** What a route counts a request's outcome with (llm_stub_requests_total by endpoint and outcome), once per request. */
export type Count = (outcome: StubOutcome) => void;

/** Standard headers of an OpenAI answer, with the rate-limit window after this request. */
export function openaiHeaders(ctx: StubContext, processingMs: number): Record<string, string> {
  const w = ctx.window.snapshot(performance.now());
  return {
    'x-request-id': `req_${randomBytes(16).toString('hex')}`,
    'openai-organization': 'org-metabench',
    'openai-version': '2020-10-01',
    'openai-processing-ms': String(Math.round(processingMs)),
    'x-ratelimit-limit-requests': String(w.requestLimit),
    'x-ratelimit-limit-tokens': String(w.tokenLimit),
    'x-ratelimit-remaining-requests': String(w.requestsLeft),
    'x-ratelimit-remaining-tokens': String(w.tokensLeft),
    'x-ratelimit-reset-requests': resetString(w.resetMs),
    'x-ratelimit-reset-tokens': resetString(w.resetMs),
  };
}
