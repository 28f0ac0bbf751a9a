import { standardNormal } from '../../foundation/distributions.js';
import type { Rng } from '../../foundation/rng.js';
import type { Profile } from './profile.js';

/**
 * The stub's latency model, as pure functions of a profile and a request's own random
 * stream (so a request's timing depends on its key, never on what else is in flight):
 *
 *   TTFT  = floor + prefill per 1k prompt tokens × prompt/1000 + lognormal jitter
 *   gap_i = lognormal(token gap)                  (between output tokens i-1 and i)
 *   n     = output length drawn from the profile's distribution, capped by max_tokens
 *   slow  = with probability tail.fraction: TTFT × ttftFactor and every gap × tokenFactor
 *
 * The first content token goes out with the role chunk at TTFT; token i at TTFT + Σ gap.
 */
export interface ResponsePlan {
  readonly ttftMs: number;
  /** Gaps before tokens 1..n-1 (token 0 goes at TTFT): n-1 entries. */
  readonly gapsMs: Float64Array;
  readonly outputTokens: number;
  readonly finishReason: 'stop' | 'length';
  /** Whether the request drew the slow tail. */
  readonly slow: boolean;
}

export interface PlanRequest {
  readonly promptTokens: number;
  /** max_tokens / max_completion_tokens, if the request set one. */
  readonly maxTokens?: number | undefined;
  /** The provider-wide slow factor (an admin switch): multiplies TTFT and gaps. 1 = normal. */
  readonly slowFactor?: number;
}

/** A lognormal variate with the given mean (mu chosen so E[X] = mean). */
export function lognormalMean(mean: number, sigma: number, rng: Rng): number {
  return Math.exp(Math.log(mean) - (sigma * sigma) / 2 + sigma * standardNormal(rng));
}

/** The deterministic part of TTFT: floor + prefill (no jitter, no tail). */
export function baseTtftMs(p: Profile, promptTokens: number): number {
  return p.ttft.floor + (p.ttft.prefillPer1kTokens * promptTokens) / 1000;
}

/** Output length before any max_tokens cap, clamped to the profile's [min, max]. */
export function drawOutputTokens(p: Profile, rng: Rng): number {
  const o = p.output;
  const raw = o.dist === 'constant' ? o.mean : lognormalMean(o.mean, o.sigma ?? 1, rng);
  return Math.min(o.max, Math.max(o.min, Math.round(raw)));
}

/** Draws a request's whole timeline. The draws are always made in the same order. */
export function planResponse(p: Profile, req: PlanRequest, rng: Rng): ResponsePlan {
  const slow = rng.next() < p.tail.fraction;
  const k = req.slowFactor ?? 1;
  const jitter = lognormalMean(p.ttft.jitter.mean, p.ttft.jitter.sigma, rng);
  const ttftMs = (baseTtftMs(p, req.promptTokens) + jitter) * (slow ? p.tail.ttftFactor : 1) * k;
  const drawn = drawOutputTokens(p, rng);
  const capped = req.maxTokens !== undefined && req.maxTokens < drawn;
  const outputTokens = capped ? Math.max(1, req.maxTokens ?? 1) : drawn;
  const gapK = (slow ? p.tail.tokenFactor : 1) * k;
  const gapsMs = new Float64Array(Math.max(0, outputTokens - 1));
  for (let i = 0; i < gapsMs.length; i++)
    gapsMs[i] = lognormalMean(p.tokens.gap.mean, p.tokens.gap.sigma, rng) * gapK;
  return { ttftMs, gapsMs, outputTokens, finishReason: capped ? 'length' : 'stop', slow };
}

/** When the last token goes out, from arrival. */
export function totalMs(plan: ResponsePlan): number {
  let t = plan.ttftMs;
  for (const g of plan.gapsMs) t += g;
  return t;
}

/** An embedding call's service time: floor + per 1k input tokens + jitter, × the slow factor. */
export function embeddingMs(p: Profile, inputTokens: number, rng: Rng, slowFactor = 1): number {
  const e = p.embeddings;
  return (
    (e.floor + (e.perKTokens * inputTokens) / 1000 + lognormalMean(e.jitter.mean, e.jitter.sigma, rng)) *
    slowFactor
  );
}
