import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { BenchError, formatIssue, SpecError } from '../../foundation/errors.js';
import type { Override } from '../../foundation/overrides.js';
import { analyseRun } from '../analysis/analyseRun.js';
import type { RunSummary } from '../analysis/summary.js';
import { isValid } from '../analysis/tally.js';
import { runFolders } from '../report/reanalyse.js';
import { hasRunRecord, readRunRecord } from '../results/record.js';
import { loadExperimentFile } from '../spec/load.js';
import { pointVerdict } from '../sweep/table.js';
import { experimentDifference, readLabSweep, type LabSweep } from './labSweep.js';
import { triggerSeconds } from './map.js';

/**
 * `metabench model FILE --over DIR` where DIR is one experiment's results folder
 * (`metabench run`'s: run-1/, run-2/, …), not a sweep's: its runs are one lab point, at
 * the load they offered and the trigger they applied, with the verdict of the majority
 * of its valid runs (as a sweep's point). A run's verdict is its summary.json; a run that
 * kept only its record (record.json.gz, as the agreement store keeps them) is analysed
 * from it by the code `metabench report` re-analyses with.
 */

const ManifestSchema = z.looseObject({
  runtime: z.string(),
  experiment: z.looseObject({ name: z.string() }),
  experimentFile: z.string().nullish(),
  plan: z.looseObject({
    scale: z.number().positive(),
    ratePerS: z.number(),
    triggers: z.array(z.looseObject({ spec: z.looseObject({ duration: z.number() }) })),
  }),
});
type RunManifest = z.infer<typeof ManifestSchema>;

function usage(message: string, hint?: string): BenchError {
  return new BenchError('E_USAGE', message, hint);
}

function readManifest(file: string): RunManifest {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw usage(`${file}: cannot read a run manifest (${(err as Error).message.split('\n')[0]})`);
  }
  const r = ManifestSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw usage(`${file}: not a run manifest (${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message})`);
  }
  return r.data;
}

/** A run's summary: summary.json when the run wrote one, else its record analysed again. */
function runSummary(runDir: string): { summary: RunSummary; analysed: boolean } {
  const file = join(runDir, 'summary.json');
  if (existsSync(file))
    return { summary: JSON.parse(readFileSync(file, 'utf8')) as RunSummary, analysed: false };
  if (hasRunRecord(runDir)) return { summary: analyseRun(readRunRecord(runDir)), analysed: true };
  throw usage(`${runDir}: neither a summary.json nor a record.json.gz: the run did not finish`);
}

/** Reads a sweep's results folder or one experiment's (see readLabRun) for --over. */
export function readOver(dir: string, file: string, sets: readonly Override[]): LabSweep {
  if (existsSync(dir) && statSync(dir).isDirectory() && runFolders(dir).length > 0)
    return readLabRun(dir, file, sets);
  return readLabSweep(dir, file, sets);
}

/**
 * One experiment's results folder as a single lab point. Refuses, naming the file, runs
 * of another experiment than FILE (with `sets`) gives, runs that differ in their load,
 * trigger or scale, and runs with other than one trigger.
 */
export function readLabRun(dir: string, file: string, sets: readonly Override[]): LabSweep {
  const runs = runFolders(dir);
  if (runs.length === 0) throw usage(`--over ${dir}: no run-<i>/ folder: not an experiment's results`);
  let expected;
  try {
    expected = loadExperimentFile(file, sets);
  } catch (err) {
    if (!(err instanceof SpecError)) throw err;
    throw usage(`${file}: ${formatIssue(err.issues[0]!)}`);
  }
  const notes: string[] = [];
  const read = runs.map((r) => {
    const where = join(dir, r.name);
    const manifestFile = join(where, 'manifest.json');
    if (!existsSync(manifestFile)) throw usage(`${where}: no manifest.json: not a run's results`);
    const manifest = readManifest(manifestFile);
    if (manifest.experiment.name !== expected.name)
      throw usage(
        `${where}: ran experiment ${manifest.experiment.name}, not ${expected.name} (${file})`,
        manifest.experimentFile
          ? `draw a run over the map of its own experiment: metabench model ${manifest.experimentFile} --over ${dir}`
          : undefined,
      );
    const differ = experimentDifference(manifest.experiment, expected);
    if (differ)
      throw usage(
        `${manifestFile}: the run's experiment differs from ${file}${sets.length ? ` with ${sets.map((s) => s.source).join(' ')}` : ''} ${differ}`,
        'give model the --set the run was made with',
      );
    if (manifest.plan.triggers.length !== 1)
      throw usage(
        `${where}: it had ${manifest.plan.triggers.length} triggers; the model map varies a single trigger`,
      );
    const { summary, analysed } = runSummary(where);
    if (analysed) notes.push(`${where}: no summary.json; its verdict analysed from its record.json.gz`);
    return { where, manifest, summary };
  });
  const first = read[0]!;
  const at = (m: RunManifest): [number, number, number] => [
    m.plan.ratePerS,
    triggerSeconds(m.plan.triggers[0]!.spec.duration, m.plan.scale),
    m.plan.scale,
  ];
  for (const r of read.slice(1))
    if (at(r.manifest).some((x, i) => x !== at(first.manifest)[i]))
      throw usage(
        `${r.where}: offered ${r.manifest.plan.ratePerS}/s at --scale ${r.manifest.plan.scale}, not as ${first.where} did (${first.manifest.plan.ratePerS}/s at --scale ${first.manifest.plan.scale}): the runs of one folder are one lab point`,
      );
  const summaries = read.map((r) => r.summary);
  const valid = summaries.filter(isValid);
  const [offeredPerS, triggerS, scale] = at(first.manifest);
  return {
    dir,
    kind: 'run',
    name: expected.name,
    runtime: first.manifest.runtime,
    scale,
    experimentFile: first.manifest.experimentFile ?? file,
    overrides: [],
    factors: [],
    points: [
      {
        sweep: dir,
        point: 1,
        single: true,
        factors: {},
        offeredPerS,
        triggerS,
        verdict: pointVerdict(summaries),
        runs: summaries.length,
        metastableRuns: valid.filter((s) => s.metastable === true).length,
        validRuns: valid.length,
      },
    ],
    notes,
  };
}
