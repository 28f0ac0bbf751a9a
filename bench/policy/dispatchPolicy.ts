import type { Dispatch } from './dispatch.js';
import type { PolicyEnv } from './ClientPolicy.js';

/**
 * A client policy on the dispatch seam (bench/policy/dispatch.ts): it wraps the layer
 * below, undici-interceptor style, with a small synchronous state machine per attempt
 * instead of a promise. Policies that loop over attempts (retry, hedge) sit above those
 * that act on one attempt; the full order is documented with the policy registry
 * (orchestrator/spec/policies/index.ts).
 */
export type DispatchPolicy = (next: Dispatch, env: PolicyEnv) => Dispatch;
