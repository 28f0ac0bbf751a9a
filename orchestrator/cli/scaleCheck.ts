import { formatIssue, SpecError, type SpecIssue } from '../../foundation/errors.js';
import type { RunPlan } from '../spec/plan.js';
import { scaleIssues } from '../spec/refuseScale.js';

/**
 * Where `--scale` meets the plan (run, sweep, their dry runs and twins): refuses a scale
 * below the experiment's limits (exit 3), unless `--any-scale` waives them; then warns on
 * stderr and returns the limits broken, for the manifest.
 */
export function checkScale(
  plans: readonly { readonly plan: RunPlan; readonly file?: string | undefined; readonly label?: string }[],
  anyScale: boolean | undefined,
): string[] {
  const issues: SpecIssue[] = plans.flatMap(({ plan, file, label }) =>
    scaleIssues(plan, file).map((i) => (label ? { ...i, message: `${label}: ${i.message}` } : i)),
  );
  if (issues.length === 0) return [];
  if (!anyScale) throw new SpecError(issues);
  const lines = issues.map(formatIssue);
  process.stderr.write(
    `warning: --any-scale: this run is not the experiment the file describes (a scale below its limits):\n  ${lines.join('\n  ')}\n`,
  );
  return lines;
}
