import { z } from 'zod';
import { didYouMean } from '../../foundation/didYouMean.js';
import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { applyOverrides, parseSet, type Override } from '../../foundation/overrides.js';
import { planRecovery, type RunPlan } from './plan.js';
import { brokenScaleLimits, describeBrokenLimit, type ScaleLimit } from './scaleLimits.js';
import { experimentSchema, type Experiment } from './schema.js';

/**
 * The sections of an experiment that only judge what a run measured: a recorded run can
 * be analysed again with other values of these (metabench report --set) and nothing
 * else, since every other field changes what the run did (load, schedule, lab, client,
 * seed, repeat) and only running it again can measure that.
 */
export const ANALYSIS_SECTIONS = ['recovery', 'validity', 'hypothesis'] as const;

/**
 * `--set path=value` texts as overrides of a recorded run's analysis, each checked like
 * the same field in the experiment file (its unit and limits), located at `file` (the
 * run's manifest.json). Every problem at once, as a SpecError (exit 3).
 */
export function analysisOverrides(texts: readonly string[], file: string): Override[] {
  const issues: SpecIssue[] = [];
  const out: Override[] = [];
  for (const text of texts) {
    const r = parseSet(text);
    if (!r.ok) issues.push({ file, path: '', message: `--set ${text}: ${r.message}` });
    else out.push(r.value);
  }
  if (issues.length) throw new SpecError(issues);
  return out;
}

/**
 * The plan of a recorded run judged with `overrides`: the experiment with each
 * overridden field parsed as the file's own would be, and what the plan derives from it
 * for the analysis (the recovery criterion) derived again by planRun's own rule. Every
 * measured part of the plan (load, phases, triggers, capacity, seed) stays as recorded.
 */
export function replanForAnalysis(plan: RunPlan, overrides: readonly Override[], file: string): RunPlan {
  if (overrides.length === 0) return plan;
  const issues: SpecIssue[] = [];
  const parsed: Override[] = [];
  for (const o of overrides) {
    const path = o.path.join('.');
    const section = o.path[0]!;
    if (!(ANALYSIS_SECTIONS as readonly string[]).includes(section)) {
      issues.push({
        file,
        path,
        message: `${o.source}: ${section} changes what the run measured, so its record cannot answer it; a recorded run is re-analysed only with ${ANALYSIS_SECTIONS.map((s) => `${s}.*`).join(', ')} (run the experiment again to change ${section})`,
      });
      continue;
    }
    const leaf = leafSchema(experimentSchema, o.path);
    if (typeof leaf === 'string') {
      issues.push({ file, path, message: `${o.source}: ${leaf}` });
      continue;
    }
    const r = leaf.safeParse(o.value);
    if (!r.success) {
      for (const iss of r.error.issues)
        issues.push({
          file,
          path: [...o.path, ...iss.path.map(String)].join('.'),
          message: `${iss.message} (from ${o.source})`,
        });
      continue;
    }
    parsed.push({ ...o, value: r.data });
  }
  if (issues.length) throw new SpecError(issues);
  const experiment = applyOverrides(
    plan.experiment as unknown as Record<string, unknown>,
    parsed,
  ) as unknown as Experiment;
  // What schema.ts checks across sections and an analysis override can break: a class's thresholds name a class of the mix.
  const classes = experiment.load.mix?.map((c) => c.name) ?? [];
  for (const name of Object.keys(experiment.hypothesis.classes ?? {}))
    if (!classes.includes(name)) {
      const guess = didYouMean(name, classes);
      issues.push({
        file,
        path: `hypothesis.classes.${name}`,
        message: classes.length
          ? `no request class "${name}" in load.mix${guess ? `; did you mean "${guess}"?` : ` (declared: ${classes.join(', ')})`}`
          : `per-class thresholds need request classes, and this run's load declared no mix`,
      });
    }
  if (issues.length) throw new SpecError(issues);
  const again: RunPlan = { ...plan, experiment, recovery: planRecovery(experiment, plan.scale) };
  // What validation refuses in a file (a tolerance under the window's noise floor, a
  // window shorter than the api's relaxation, a deadline under two buckets) is refused
  // here too, but only where the overrides broke it: a run made with --any-scale keeps
  // the limits it was allowed to break.
  const before = new Set(brokenScaleLimits(plan).map(limitKey));
  const sources = overrides.map((o) => o.source).join(', ');
  for (const l of brokenScaleLimits(again))
    if (!before.has(limitKey(l)))
      issues.push({
        file,
        path: l.path.join('.'),
        message: `${describeBrokenLimit(l, again.scale)} (from ${sources})`,
      });
  if (issues.length) throw new SpecError(issues);
  return again;
}

/** A limit, whatever the values it is computed from (so an override that moves one is still the same one). */
function limitKey(l: ScaleLimit): string {
  return [l.kind, l.what, l.path.join('.'), l.bound.replace(/[\d.,%]+/g, '#')].join('|');
}

/** The schema of the field at `path` of the experiment file, or why there is none. */
function leafSchema(root: z.ZodType, path: readonly string[]): z.ZodType | string {
  let s: z.ZodType = root;
  for (let i = 0; i < path.length; i++) {
    s = unwrap(s);
    const seg = path[i]!;
    const at = path.slice(0, i).join('.') || 'the experiment';
    if (s instanceof z.ZodObject) {
      const shape = s.shape as Record<string, z.ZodType>;
      const next = shape[seg];
      if (!next) {
        const guess = didYouMean(seg, Object.keys(shape));
        return `${at} has no field "${seg}"${guess ? `; did you mean "${guess}"?` : ` (known: ${Object.keys(shape).join(', ')})`}`;
      }
      s = next;
    } else if (s instanceof z.ZodRecord) s = s.valueType as z.ZodType;
    else return `${at} is a value, not a section: it has no field "${seg}"`;
  }
  return s;
}

function unwrap(s: z.ZodType): z.ZodType {
  for (;;) {
    if (s instanceof z.ZodOptional || s instanceof z.ZodNullable || s instanceof z.ZodDefault)
      s = s.unwrap() as z.ZodType;
    else return s;
  }
}
