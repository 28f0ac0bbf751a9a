import { InvalidArgumentError, type Command } from 'commander';
import type { RunSummary } from '../analysis/summary.js';
import { BenchError } from '../../foundation/errors.js';
import { OUTCOMES, type Outcome } from '../analysis/outcome.js';

export type FailOn = 'hypothesis' | Outcome;
const KINDS: readonly FailOn[] = ['hypothesis', ...OUTCOMES];

/** `--fail-on hypothesis|<outcome>` (repeatable): exit code 10 for CI gating. */
export function addFailOnOption(cmd: Command): Command {
  return cmd.option(
    '--fail-on <what>',
    `exit with code 10 when a hypothesis is not a pass (hypothesis) or a run's outcome is the one named (${OUTCOMES.join(', ')}); metastable also fails a run that is not shown to recover (unmeasured, not-recovered, invalid); repeatable`,
    (v: string, prev: FailOn[] = []) => {
      if (!KINDS.includes(v as FailOn))
        throw new InvalidArgumentError(`--fail-on takes ${KINDS.join(' or ')} (got "${v}")`);
      return [...prev, v as FailOn];
    },
  );
}

/**
 * Why the runs fail the gate, or [] when they pass it. A gate is strict: an unmeasured
 * verdict (no samples, or observation too short) fails it, since no samples is never a pass.
 * `hypothesis` considers every judged threshold: both windows (the baseline and after
 * recovery, which is unmeasured when the run did not recover) and every request class
 * (hypothesis.classes, where the deprecated load.mix[].thresholds are read into).
 */
export function gateFailures(runs: readonly RunSummary[], failOn: readonly FailOn[]): string[] {
  const out: string[] = [];
  for (const r of runs) {
    if (failOn.includes('hypothesis')) {
      for (const h of r.hypothesis)
        if (h.verdict !== 'pass')
          out.push(
            `run ${r.run}: hypothesis ${h.class !== undefined ? `${h.class} ` : ''}${h.metric} ${h.threshold} ${h.window === 'afterRecovery' ? 'after recovery' : `in the ${h.window}`}: ${h.verdict}${h.note ? ` (${h.note})` : ''}`,
          );
    }
    const outcome = r.outcome;
    // `metastable` stays strict, as before: a run not shown to recover fails it.
    const strict = failOn.includes('metastable') && !r.recovered;
    if (strict || (failOn as readonly string[]).includes(outcome))
      out.push(`run ${r.run}: ${outcome}${outcome === 'metastable' ? '' : ` (${r.outcomeReason})`}`);
  }
  return out;
}

export function enforceGate(runs: readonly RunSummary[], failOn: readonly FailOn[] | undefined): void {
  if (!failOn?.length) return;
  const why = gateFailures(runs, failOn);
  if (why.length) throw new BenchError('E_VERDICT', `--fail-on ${failOn.join(',')}:\n  ${why.join('\n  ')}`);
}
