import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { SpecError, formatIssue, type SpecIssue } from '../../foundation/errors.js';
import { planPoints, type Factor, type SweepPoint } from './sweepPlan.js';
import { RUNTIMES } from '../lab/runtimes.js';
import { int } from '../../foundation/fields.js';
import { validateExperiment } from './load.js';
import { parseYamlFile, readSpecFile, toSpecIssues, type ParsedYaml } from '../../foundation/yamlFile.js';
import { parsePath, type Override } from '../../foundation/overrides.js';
import type { Experiment } from './schema.js';
import { triggerKind, triggerKinds } from '../trigger/registry.js';

/** Runtimes a sweep can run its points on (the lab's runtimes, orchestrator/lab/runtimes.ts). */
export const SWEEP_RUNTIMES = RUNTIMES;

const MAX_POINTS = 1000;

/**
 * A sweep file: a base experiment (path relative to the sweep file) and the factors to
 * vary, each a field of the experiment by its dotted path with the values it takes.
 *
 *   name: retry-storm-rate
 *   experiment: retry-storm.yaml
 *   design: one-at-a-time        # around the reference point (the experiment as written), or factorial
 *   factors:
 *     - { path: load.rate, values: [50% capacity, 70% capacity, 90% capacity] }
 *     - { path: client.retry.maxAttempts, values: [1, 2, 4, 8] }
 *   repeat: 3                    # runs per point (default: the experiment's repeat)
 *   runtime: local               # or sim (the simulation)
 */
export const sweepSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9._-]{0,79}$/, 'use lower-case letters, digits, ".", "_" and "-" (at most 80)')
      .describe('the sweep name; results go to results/<date>-<name>/'),
    description: z.string().max(2000).optional(),
    experiment: z.string().min(1).describe('the base experiment file, relative to this file'),
    design: z
      .enum(['one-at-a-time', 'factorial'])
      .default('one-at-a-time')
      .describe('one factor at a time around the reference point, or every combination'),
    factors: z
      .array(
        z.strictObject({
          path: z
            .string()
            .refine(
              (s) => parsePath(s).ok,
              'a dotted field path such as load.rate or client.retry.maxAttempts',
            )
            .describe('a field of the experiment, by its dotted path'),
          values: z
            .array(z.unknown())
            .min(1)
            .max(MAX_POINTS)
            .describe('the values it takes, written as in the file'),
          reference: z
            .unknown()
            .optional()
            .describe('its value at the reference point (default: the experiment as written)'),
        }),
      )
      .min(1)
      .max(10),
    repeat: int(1, 1000).optional().describe("runs per point (default: the experiment's repeat)"),
    runtime: z
      .enum(SWEEP_RUNTIMES)
      .default('local')
      .describe(`where the points run: ${SWEEP_RUNTIMES.join(' | ')} (--runtime overrides it)`),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    s.factors.forEach((f, i) => {
      if (seen.has(f.path))
        ctx.addIssue({ code: 'custom', path: ['factors', i, 'path'], message: `${f.path} is varied twice` });
      seen.add(f.path);
    });
    const n =
      s.design === 'factorial'
        ? s.factors.reduce((a, f) => a * f.values.length, 1)
        : 1 + s.factors.reduce((a, f) => a + f.values.length, 0);
    if (n > MAX_POINTS)
      ctx.addIssue({ code: 'custom', path: ['factors'], message: `${n} points is more than ${MAX_POINTS}` });
  });

export type SweepSpec = z.output<typeof sweepSchema>;

export interface LoadedSweep {
  readonly file: string;
  readonly sweep: SweepSpec;
  readonly experimentFile: string;
  readonly factors: readonly Factor[];
  readonly points: readonly SweepPoint[];
  /** Every point's experiment, validated (index i is point i + 1). */
  readonly experiments: readonly Experiment[];
  /** Every point's overrides: the command line's, then its factor values. */
  readonly overrides: readonly (readonly Override[])[];
}

/** Whether parsed YAML looks like a sweep file rather than an experiment. */
export function isSweepData(data: Record<string, unknown>): boolean {
  return 'factors' in data && 'experiment' in data;
}

/**
 * Reads a sweep file and its base experiment, plans the points and validates every
 * point's experiment before anything runs: all problems of all points at once.
 */
export function loadSweepFile(file: string, sets: readonly Override[] = []): LoadedSweep {
  return loadSweep(parseYamlFile(readSpecFile(file), file, 'a sweep'), sets);
}

export function loadSweep(y: ParsedYaml, sets: readonly Override[] = []): LoadedSweep {
  const file = y.file;
  if (!('factors' in y.data) && 'lab' in y.data && 'load' in y.data)
    throw new SpecError([
      {
        file,
        line: 1,
        column: 1,
        path: '',
        message: `this is an experiment file: use \`metabench run ${file}\``,
      },
    ]);
  const r = sweepSchema.safeParse(y.data, { reportInput: true });
  if (!r.success) throw new SpecError(toSpecIssues(r.error.issues, y.doc, y.lines, file, [], sweepSchema));
  const sweep = r.data;
  const experimentFile = isAbsolute(sweep.experiment)
    ? sweep.experiment
    : resolve(dirname(file), sweep.experiment);
  const base = parseYamlFile(readSpecFile(experimentFile), experimentFile);
  // The base as the command line changed it: a factor's default reference comes from it.
  const baseExperiment = validateExperiment(base, sets);

  // A trigger's own field (its magnitude: factor, to, probability) is checked against the
  // trigger's kind first, each value at its line in this file.
  const issues: SpecIssue[] = sweep.factors.flatMap((f, i) =>
    triggerFieldIssues(y, i, f.path, f.values, base, sets, baseExperiment),
  );
  if (issues.length) throw new SpecError(issues);

  const factors: Factor[] = sweep.factors.map((f, i) => {
    let reference = f.reference;
    if (reference === undefined) {
      const set = [...sets].reverse().find((o) => o.path.join('.') === f.path);
      reference = set ? set.value : valueAt(base.data, f.path.split('.'));
    }
    if (reference === undefined && sweep.design === 'one-at-a-time')
      issues.push({
        file,
        ...lineOf(y, ['factors', i]),
        path: `factors.${i}.reference`,
        message: `the experiment does not write ${f.path}; give the reference value of this factor`,
      });
    return { path: f.path, values: f.values, reference };
  });
  if (issues.length) throw new SpecError(issues);

  const points = planPoints(sweep.design, factors);
  const experiments: Experiment[] = [];
  const overrides: Override[][] = [];
  const seen = new Set<string>();
  for (const p of points) {
    const o: Override[] = [
      ...sets,
      ...Object.entries(p.values).map(([path, value]) => ({
        path: path.split('.'),
        value,
        source: `factor ${path}=${JSON.stringify(value)} of ${file}`,
      })),
    ];
    overrides.push(o);
    try {
      experiments.push(validateExperiment(base, o));
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      for (const i of err.issues) {
        const key = formatIssue(i);
        if (!seen.has(key)) issues.push(i);
        seen.add(key);
      }
    }
  }
  if (issues.length) throw new SpecError(issues);
  return { file, sweep, experimentFile, factors, points, experiments, overrides };
}

/**
 * A factor `schedule.trigger.<field>` (a field of the experiment's single trigger): the
 * trigger's kind must have that field (a pause has no factor), and each value must be one the
 * kind accepts there (its schema and its checks against the lab), each refusal at the value's
 * line in the sweep file. Other paths: none (their points are validated as experiments).
 */
function triggerFieldIssues(
  y: ParsedYaml,
  i: number,
  path: string,
  values: readonly unknown[],
  base: ParsedYaml,
  sets: readonly Override[],
  e: Experiment,
): SpecIssue[] {
  const segs = path.split('.');
  const field = segs[2];
  if (segs.length !== 3 || segs[0] !== 'schedule' || segs[1] !== 'trigger' || !field) return [];
  const t = e.schedule.triggers[0];
  if (e.schedule.writtenAs !== 'trigger' || !t) return [];
  if (field === 'kind')
    return [
      {
        file: y.file,
        ...lineOf(y, ['factors', i, 'path']),
        path: `factors.${i}.path`,
        message: `${path}: a sweep varies a trigger's fields, not its kind (write one experiment per kind)`,
      },
    ];
  const shape = (triggerKind(t.kind).schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  if (!(field in shape)) {
    const others = triggerKinds()
      .filter((k) => field in ((k.schema as unknown as { shape?: Record<string, unknown> }).shape ?? {}))
      .map((k) => k.kind);
    return [
      {
        file: y.file,
        ...lineOf(y, ['factors', i, 'path']),
        path: `factors.${i}.path`,
        message: `${path}: the experiment's trigger is a ${t.kind}, which has no ${field} (its fields: ${Object.keys(
          shape,
        )
          .filter((k) => k !== 'kind')
          .join(', ')})${others.length ? `; ${field} is a field of ${others.join(', ')}` : ''}`,
      },
    ];
  }
  return values.flatMap((value, j) => {
    try {
      validateExperiment(base, [...sets, { path: segs, value, source: `factor ${path}` }], () => undefined);
      return [];
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      return [
        {
          file: y.file,
          ...lineOf(y, ['factors', i, 'values', j]),
          path: `factors.${i}.values.${j}`,
          message: `${path} = ${JSON.stringify(value)} is not a ${t.kind} ${field}: ${err.issues
            .map((x) => x.message.replace(/ \(from factor [^)]*\)$/, ''))
            .join('; ')}`,
        },
      ];
    }
  });
}

function valueAt(data: unknown, path: readonly string[]): unknown {
  let node = data;
  for (const seg of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node;
}

function lineOf(y: ParsedYaml, path: readonly (string | number)[]): { line?: number; column?: number } {
  const node = y.doc.getIn(path, true) as { range?: [number, number, number] } | undefined;
  if (!node?.range) return {};
  const p = y.lines.linePos(node.range[0]);
  return { line: p.line, column: p.col };
}
