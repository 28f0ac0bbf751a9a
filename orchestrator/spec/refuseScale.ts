import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { locate, parseYamlFile, readSpecFile, type ParsedYaml } from '../../foundation/yamlFile.js';
import type { RunPlan } from './plan.js';
import { brokenScaleLimits, describeBrokenLimit, smallestAcceptedScale } from './scaleLimits.js';

/**
 * The problems of a plan's scale (orchestrator/spec/scaleLimits.ts), each at the field
 * whose scaled duration breaks a limit, with the smallest scale the file accepts; empty
 * when the scale is accepted. `file` is read again for the fields' lines.
 */
export function scaleIssues(plan: RunPlan, file?: string): SpecIssue[] {
  const broken = brokenScaleLimits(plan);
  if (broken.length === 0) return [];
  const smallest = smallestAcceptedScale(plan);
  const y = file !== undefined ? yamlOf(file) : null;
  const head =
    smallest > 1
      ? 'no scale is accepted, not even 1'
      : `--scale ${plan.scale} is below the smallest scale this experiment accepts, ${smallest}`;
  return broken.map((l) => ({
    file: file ?? `experiment ${plan.experiment.name}`,
    ...(y ? locate(y, l.path) : {}),
    path: l.path.join('.'),
    message: `${head}: ${describeBrokenLimit(l, plan.scale)}`,
  }));
}

/**
 * Refuses a scale below the plan's limits (DESIGN.md §2 "Scale"): a SpecError (exit 3)
 * naming the file, each field and its line, the constant, and the smallest scale accepted.
 */
export function refuseScale(plan: RunPlan, file?: string): void {
  const issues = scaleIssues(plan, file);
  if (issues.length) throw new SpecError(issues);
}

function yamlOf(file: string): ParsedYaml | null {
  try {
    return parseYamlFile(readSpecFile(file), file);
  } catch {
    // The file was read and validated before: lines are a courtesy, never a new failure.
    return null;
  }
}
