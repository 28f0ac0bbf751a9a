import assert from 'node:assert/strict';
import type { Outcome } from '../../orchestrator/analysis/outcome.js';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { suiteScale as suiteScaleOf } from '../../orchestrator/model/agreement.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';

// The catalogue (experiments/README.md) as the tests read it: each experiment's claimed
// outcome and the scale the reproduction suite runs it at (its smallest accepted scale,
// orchestrator/model/agreement.ts). test/repro asserts the claims in the lab; the scale
// test (sim/catalogueScale.test.ts) checks them in simulation at that scale, 0.5 and 1.

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

export { SUITE_MIN_SCALE } from '../../orchestrator/model/agreement.js';

/** The repository's experiments/NAME.yaml. */
export function experimentPath(name: string): string {
  return fileURLToPath(new URL(`../../../experiments/${name}.yaml`, import.meta.url));
}

/** The scale the suite runs the catalogue's experiments/NAME.yaml at (orchestrator/model/agreement.ts). */
export function suiteScale(name: string): number {
  const file = experimentPath(name);
  return suiteScaleOf(loadExperimentFile(file), file);
}

const OUTCOMES: readonly Outcome[] = [
  'recovered',
  'recovered-late',
  'metastable',
  'not-recovered',
  'unmeasured',
  'invalid',
];

/**
 * Each catalogue experiment's claimed outcome, read from experiments/README.md: the bold
 * word opening its "expected outcome" cell (exactly `recovered` or `recovered-late`, as
 * its run at the suite's scale comes out); null for a row with none (step-test, a
 * calibration: metabench calibrate).
 */
export function claimedOutcomes(): Readonly<Record<string, Outcome | null>> {
  const table = readFileSync(new URL('../../../experiments/README.md', import.meta.url), 'utf8');
  const out: Record<string, Outcome | null> = {};
  for (const m of table.matchAll(/^\| `([a-z0-9-]+)\.yaml` \|([^\n]*)$/gm)) {
    const expected = m[2]!.split(' | ')[2]?.trim() ?? '';
    const bold = /^\*\*([a-z-]+)\*\*/.exec(expected)?.[1];
    if (bold !== undefined && !(OUTCOMES as readonly string[]).includes(bold))
      throw new Error(`experiments/README.md: ${m[1]}: "${bold}" is not an outcome`);
    out[m[1]!] = (bold as Outcome | undefined) ?? null;
  }
  return out;
}

/** The outcome the catalogue claims for experiments/NAME.yaml (it must claim one). */
export function claimed(name: string): Outcome {
  const c = claimedOutcomes()[name];
  if (c === undefined || c === null) throw new Error(`experiments/README.md claims no outcome for ${name}`);
  return c;
}

/**
 * The reproduction suite's outcome assertion: the run came out exactly as
 * experiments/README.md claims for NAME (`recovered` and `recovered-late` told apart).
 */
export function assertClaimed(name: string, s: RunSummary): void {
  assert.equal(outcomeOf(s), claimed(name), `${name}: ${describeOutcome(s)}`);
}
