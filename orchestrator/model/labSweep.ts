import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { BenchError, formatIssue, SpecError } from '../../foundation/errors.js';
import { SweepTableSchema, type SweepTable } from '../report/tables.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../../foundation/overrides.js';
import { planRun } from '../spec/plan.js';
import { triggerSeconds } from './map.js';
import type { LabPoint } from './over.js';

/** The only factors a sweep drawn over the map may vary: the map's two axes. */
export const MAP_AXES = ['load.rate', 'schedule.trigger.duration'] as const;

/** Fields of a point's experiment that may differ from FILE's without changing the system. */
const IGNORED = new Set(['repeat', 'seed', 'description']);

/** A lab sweep's results folder, read for `metabench model FILE --over DIR`. */
export interface LabSweep {
  /** The folder, as given. */
  readonly dir: string;
  /** sweep (the default): a sweep's results folder; run: one experiment's (labRun.ts), a single point. */
  readonly kind?: 'sweep' | 'run';
  readonly name: string;
  readonly runtime: string;
  /** The schedule scale the sweep ran at. */
  readonly scale: number;
  /** The experiment file the sweep's points ran. */
  readonly experimentFile: string;
  /** The sweep's own --set overrides, as written. */
  readonly overrides: readonly string[];
  /** The factors it varied (a subset of MAP_AXES). */
  readonly factors: readonly string[];
  readonly points: readonly LabPoint[];
  /** What had to be assumed, one line each (a point without its manifest, read from its factor values). */
  readonly notes: readonly string[];
}

const PlanSchema = z.looseObject({
  name: z.string(),
  experimentFile: z.string(),
  runtime: z.string(),
  scale: z.number().positive(),
  overrides: z.array(z.string()).default([]),
  points: z.array(
    z.looseObject({ index: z.number().int().positive(), values: z.record(z.string(), z.unknown()) }),
  ),
});

const ManifestSchema = z.looseObject({
  experiment: z.looseObject({ name: z.string() }),
  plan: z.looseObject({
    scale: z.number().positive(),
    ratePerS: z.number(),
    triggers: z.array(z.looseObject({ spec: z.looseObject({ duration: z.number() }) })),
  }),
});

function usage(message: string, hint?: string): BenchError {
  return new BenchError('E_USAGE', message, hint);
}

function readJson<T>(file: string, schema: z.ZodType<T>, what: string): T {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw usage(`${file}: cannot read ${what} (${(err as Error).message.split('\n')[0]})`);
  }
  const r = schema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw usage(`${file}: not ${what} (${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message})`);
  }
  return r.data;
}

/** A factor value as sweep.json writes it (table.ts): numbers and strings as they are, anything else as JSON. */
function asWritten(v: unknown): string | number {
  return typeof v === 'number' ? v : typeof v === 'string' ? v : JSON.stringify(v);
}

/** The dotted paths at which two JSON values differ. */
/**
 * The fields in which a lab run's recorded experiment differs from FILE's (with model's --set),
 * but for those that do not change a point (IGNORED), as a sentence's tail: "in a, b and 2 more".
 */
export function experimentDifference(recorded: unknown, expected: unknown): string | null {
  const differ = differingPaths(
    JSON.parse(JSON.stringify(recorded)),
    JSON.parse(JSON.stringify(expected)),
  ).filter((path) => !IGNORED.has(path.split('.')[0]!));
  if (differ.length === 0) return null;
  return `in ${differ.slice(0, 4).join(', ')}${differ.length > 4 ? ` and ${differ.length - 4} more` : ''}`;
}

export function differingPaths(a: unknown, b: unknown, prefix = ''): string[] {
  if (isDeepStrictEqual(a, b)) return [];
  const isObj = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null;
  if (!isObj(a) || !isObj(b) || Array.isArray(a) !== Array.isArray(b)) return [prefix || '(the whole)'];
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length) return [prefix];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.flatMap((k) => differingPaths(a[k], b[k], prefix ? `${prefix}.${k}` : k));
}

/**
 * Reads a sweep's results folder (metabench sweep --out DIR) as points on the model map's
 * axes. The lab's verdicts come from DIR/sweep.json; each point's offered rate (origins/s,
 * a `% capacity` resolved against the capacity its runs used) and trigger duration (after
 * the sweep's scale) from its first run's manifest.json, or, when that is missing, from its
 * factor values planned as the sweep would (nominal capacity). Refuses, naming the folder,
 * a sweep that varies anything but load.rate and schedule.trigger.duration, or whose points
 * ran another experiment than `file` (with `sets`) gives.
 */
export function readLabSweep(dir: string, file: string, sets: readonly Override[]): LabSweep {
  if (!existsSync(dir)) throw usage(`--over ${dir}: no such folder`);
  if (!statSync(dir).isDirectory())
    throw usage(`--over ${dir}: not a folder (give a sweep's results folder)`);
  const tableFile = join(dir, 'sweep.json');
  if (!existsSync(tableFile))
    throw usage(
      `--over ${dir}: no sweep.json: not the results folder of a sweep`,
      existsSync(join(dir, 'summary.json'))
        ? 'it holds one experiment’s results; --over takes the folder `metabench sweep` wrote'
        : 'give the folder `metabench sweep` wrote (its --out)',
    );
  const table: SweepTable = readJson(tableFile, SweepTableSchema, 'a sweep table');
  const others = table.factors.map((f) => f.name).filter((n) => !(MAP_AXES as readonly string[]).includes(n));
  if (others.length)
    throw usage(
      `${tableFile}: the sweep varies ${others.join(', ')}; a sweep drawn over the model map may vary only ${MAP_AXES.join(' and ')}`,
    );
  if (table.rows.length === 0) throw usage(`${tableFile}: no point of the sweep has finished`);
  const planFile = join(dir, 'sweep-plan.json');
  if (!existsSync(planFile))
    throw usage(`--over ${dir}: no sweep-plan.json: not the results folder of a sweep`);
  const plan = readJson(planFile, PlanSchema, 'a sweep plan');

  const notes: string[] = [];
  const points = table.rows.map((row, i): LabPoint => {
    const p = plan.points.find((q) =>
      isDeepStrictEqual(
        Object.fromEntries(Object.entries(q.values).map(([k, v]) => [k, asWritten(v)])),
        row.factors,
      ),
    );
    if (!p)
      throw usage(`${tableFile}: row ${i + 1} (${JSON.stringify(row.factors)}) is no point of ${planFile}`);
    const where = join(dir, `point-${p.index}`);
    const manifestFile = join(where, 'run-1', 'manifest.json');
    const manifest = existsSync(manifestFile)
      ? readJson(manifestFile, ManifestSchema, 'a run manifest')
      : null;
    const summaryFile = join(where, 'summary.json');
    const ranName =
      manifest?.experiment.name ??
      (existsSync(summaryFile)
        ? readJson(summaryFile, z.looseObject({ experiment: z.string() }), 'a summary').experiment
        : null);
    // FILE with the sweep's factor values at this point, as the sweep made the point's experiment.
    let expected;
    try {
      expected = loadExperimentFile(file, [
        ...sets,
        ...Object.entries(p.values).map(([path, value]) => ({
          path: path.split('.'),
          value,
          source: `factor ${path}=${JSON.stringify(value)} of ${planFile}`,
        })),
      ]);
    } catch (err) {
      if (!(err instanceof SpecError)) throw err;
      throw usage(`${where}: its factor values do not apply to ${file}: ${formatIssue(err.issues[0]!)}`);
    }
    if (ranName !== null && ranName !== expected.name)
      throw usage(
        `${where}: ran experiment ${ranName} (${plan.experimentFile}), not ${expected.name} (${file})`,
        `draw a sweep over the map of its own experiment: metabench model ${plan.experimentFile} --over ${dir}`,
      );
    if (manifest) {
      const differ = experimentDifference(manifest.experiment, expected);
      if (differ)
        throw usage(
          `${manifestFile}: the point's experiment differs from ${file}${sets.length ? ` with ${sets.map((s) => s.source).join(' ')}` : ''} ${differ}`,
          plan.overrides.length
            ? `the sweep ran with ${plan.overrides.map((s) => `--set ${s}`).join(' ')}: give model the same --set`
            : 'the lab points must be the experiment of FILE, moved only in load.rate and schedule.trigger.duration',
        );
    }
    let ratePerS: number;
    let triggers: readonly { readonly spec: { readonly duration: number } }[];
    let scale: number;
    if (manifest) {
      ({ ratePerS, triggers, scale } = manifest.plan);
    } else {
      const planned = planRun(expected, { scale: plan.scale, run: 1, sourceFile: file });
      ({ ratePerS, triggers, scale } = planned);
      notes.push(
        `${where}: no run-1/manifest.json; its offered rate and trigger read from its factor values${'capacityFraction' in (expected.load.rate ?? {}) ? ` (% capacity of the nominal ${planned.capacity.nominalPerS}/s)` : ''}`,
      );
    }
    if (triggers.length !== 1)
      throw usage(
        `${where}: its runs had ${triggers.length} triggers; the model map varies a single trigger`,
      );
    return {
      sweep: dir,
      point: p.index,
      factors: row.factors,
      offeredPerS: ratePerS,
      triggerS: triggerSeconds(triggers[0]!.spec.duration, scale),
      verdict: row.verdict,
      runs: row.runs,
      metastableRuns: row.metastableRuns,
      validRuns: row.validRuns,
    };
  });
  return {
    dir,
    name: plan.name,
    runtime: plan.runtime,
    scale: plan.scale,
    experimentFile: plan.experimentFile,
    overrides: plan.overrides,
    factors: table.factors.map((f) => f.name),
    points,
    notes,
  };
}
