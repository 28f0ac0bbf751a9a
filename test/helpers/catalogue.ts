import type { Outcome } from '../../orchestrator/analysis/outcome.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

// The catalogue (experiments/README.md) as the tests read it: each experiment's claimed
// outcome class, the scale the reproduction suite runs it at, and the experiments the
// simulation cannot model. test/repro asserts the claims in the lab; the scale test
// (sim/catalogueScale.test.ts) checks the suite's scale does not change an outcome.

export type { Outcome } from '../../orchestrator/analysis/outcome.js';

/** A run's outcome (summary.json's `outcome`). */
export function outcomeOf(s: RunSummary): Outcome {
  return s.outcome;
}

/** The outcome with the reason (and the failed validity checks), for assertion messages. */
export function describeOutcome(s: RunSummary): string {
  const x = s as {
    outcomeReason?: string;
    sustainingEffect?: string | null;
    projectedRecoveryS?: number | null;
    validity?: { failed?: readonly { check: string; value: unknown; limit: unknown }[] };
  };
  const failed = x.validity?.failed ?? [];
  return [
    `${outcomeOf(s)}: ${x.outcomeReason ?? s.recoveryReason}`,
    failed.length
      ? `invalid: ${failed.map((f) => `${f.check} ${JSON.stringify(f.value)} (limit ${JSON.stringify(f.limit)})`).join(', ')}`
      : '',
    x.sustainingEffect ? `sustained by ${x.sustainingEffect}` : '',
    typeof x.projectedRecoveryS === 'number' ? `projected recovery ${x.projectedRecoveryS} s` : '',
    s.warnings.length ? `warnings: ${s.warnings.join('; ')}` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

export { SUITE_SCALE, SCALE_EXCEPTIONS, suiteScale } from '../../orchestrator/model/agreement.js';

/**
 * Each catalogue experiment's claimed outcome class: the first word of its "expected
 * outcome" cell in experiments/README.md (a test checks they are the same). step-test
 * is a calibration (metabench calibrate): it has no outcome class.
 */
export const CLAIMED: Readonly<Record<string, Outcome | null>> = {
  'retry-storm': 'metastable',
  'retry-storm-no-retry': 'recovered',
  'retry-storm-backoff': 'metastable',
  'retry-storm-budget': 'recovered',
  'retry-storm-breaker': 'recovered',
  'hedging-amplification': 'metastable',
  'closed-loop-pause': 'recovered',
  'kill-restart': 'recovered',
  'load-spike': 'recovered',
  'lifo-vs-fifo-fifo': 'recovered',
  'lifo-vs-fifo-lifo': 'recovered',
  'shed-breaker-oscillation': 'invalid',
  'cache-stampede': 'metastable',
  'cache-stampede-mitigated': 'recovered',
  'cache-outage': 'metastable',
  'db-pause': 'recovered',
  'db-partition': 'recovered',
  'db-latency': 'recovered',
  'error-path': 'metastable',
  'error-path-mitigated': 'recovered',
  'replica-failover': 'metastable',
  'replica-failover-no-retry': 'recovered',
  'lb-herding': 'recovered',
  'lb-herding-p2c': 'recovered',
  'hotos21-retry': 'metastable',
  'llm-platform': 'recovered',
  'llm-platform-failing': 'recovered',
  'llm-provider-outage': 'recovered',
  'step-test': null,
  soak: 'recovered',
};

/** Catalogue experiments the simulation cannot model, and why. */
export const NOT_SIMULATED: Readonly<Record<string, string>> = {
  'llm-platform':
    'the simulated api serves /work and /health only: the LLM routes (/chat, /agent, /retrieve, /ingest) answer 404 and there is no provider behind them',
  'llm-platform-failing':
    'the simulated api serves /work and /health only: the LLM routes answer 404 and there is no provider to fail',
  'llm-provider-outage':
    'the simulated lab has no LLM provider (sim/refusals.ts): there is no provider to take down and no api retrying it',
  'step-test':
    'its claim is a step test, and metabench calibrate measures a real lab only (it refuses --runtime sim)',
};
