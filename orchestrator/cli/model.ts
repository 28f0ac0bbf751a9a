import { mapProgressLine, plainLines } from './terminal.js';
import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { resultsDir } from '../results/files.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../../foundation/overrides.js';
import { planRun } from '../spec/plan.js';
import { parseDuration, parseRate } from '../../foundation/units.js';
import { nominalCapacityPerS } from '../spec/plan.js';
import { BenchError } from '../../foundation/errors.js';
import type { LabSweep } from '../model/labSweep.js';
import { readOver } from '../model/labRun.js';
import { simulatedMap, mapTable } from '../model/map.js';
import { describeJoin, distinctValues, joinLab, type LabJoin } from '../model/over.js';
import { describePrediction, predict } from '../model/predict.js';
import { writeModel } from '../model/report.js';
import { magnitudeAxis } from '../model/magnitudeAxis.js';
import { boundaryLines, magnitudeModel, predictedAt, type MagnitudeModel } from '../model/magnitude.js';
import { ctmcAtLab, ctmcModel, ctmcSection, type CtmcAtLabPoint, type CtmcModel } from '../model/ctmc.js';
import type { ChainKnobs } from '../analysis/markov/experiment.js';
import { positiveNumber, wholeNumber } from './options.js';
import { availableParallelism } from 'node:os';
import { round } from '../../foundation/round.js';
import { addSetOption, describeOverrides } from './setOption.js';
import { capacityFor, parseCapacityMode, type CapacityMode } from '../calibrate/capacity.js';
import { RUNTIMES, type Runtime } from '../lab/runtimes.js';
import { refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { Option } from 'commander';

function list<T>(flag: string, parse: (s: string) => T | undefined) {
  return (v: string): T[] =>
    v.split(',').map((s) => {
      const x = parse(s.trim());
      if (x === undefined) throw new InvalidArgumentError(`${flag}: cannot read "${s}"`);
      return x;
    });
}

function positiveInt(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError(`${flag}: expected a whole number ≥ 1, got "${v}"`);
    return n;
  };
}

function nonNegative(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n < 0)
      throw new InvalidArgumentError(`${flag}: expected a number ≥ 0, got "${v}"`);
    return n;
  };
}

export function register(program: Command): void {
  const cmd = program
    .command('model')
    .description(
      "the experiment's queueing model: the fluid prediction of its bistable range, and a simulated map of the metastable region over offered load × trigger duration (or × its magnitude, with the predicted boundary)",
    )
    .argument('<file>', 'experiment file (YAML)')
    .option(
      '--scale <F>',
      "the schedule scale of the simulated runs (default: 1; with --over, the lab sweep's)",
      positiveNumber('--scale'),
    )
    .option(
      '--rates <LIST>',
      'offered loads of the map, e.g. 50/s,100/s or 20%,50% (of capacity); default: 7 from 10% to 90% of capacity (with --over, the lab points’ loads)',
      list('--rates', (s) => s),
    )
    .option(
      '--durations <LIST>',
      "trigger durations of the map as the file would write them, e.g. 500ms,1s,5s; default: 10%, 25%, 50% and 100% of the file's (with --over, the lab points')",
      list('--durations', (s) => {
        const r = parseDuration(s);
        return r.ok ? r.value : undefined;
      }),
    )
    .option(
      '--magnitudes <LIST>',
      "the map over the trigger's magnitude instead of its duration (which stays the file's): slowdown or load-spike factors (1.2x,2x,3x), workers' pool sizes (6,4,2) or loss probabilities (1%,5%,20%), as the file would write them; the fluid model's predicted boundary is drawn over the cells",
      list('--magnitudes', (s) => (s === '' ? undefined : s)),
    )
    .option(
      '--capacity <MODE>',
      "the model's capacity cμ: auto (the one metabench calibrate measured for this lab on this machine, else the nominal c/S), nominal, or measured (an error without a calibration); a measured one stretches the declared work to c / measured, in the prediction and in the simulated map",
      parseCapacityMode,
      'auto' as CapacityMode,
    )
    .addOption(
      new Option(
        '--runtime <RUNTIME>',
        "the runtime whose calibration --capacity reads (default: the lab sweeps' with --over, else local)",
      ).choices([...RUNTIMES]),
    )
    .option('--no-map', 'only the fluid prediction (no simulation)')
    .option(
      '--jobs <N>',
      "map cells simulated at once, each in a thread of its own (default: the machine's cores)",
      wholeNumber('--jobs', 1, 256),
    )
    .option(
      '--ctmc',
      "add the Markov model (Metafor's CTMC of the api and its retrying clients): predicted recovery time and time to a spontaneous collapse over offered load (the map's loads, or 10% to 100% of capacity), and a figure of them",
    )
    .option(
      '--queue-bound <N>',
      'with --ctmc: the queue bound in jobs (default: queueLimit + workers, else max(100, 3cμτ))',
      positiveInt('--queue-bound'),
    )
    .option(
      '--orbit-bound <N>',
      'with --ctmc: the orbit bound in retries (default: max(20, cμ·R·wait))',
      positiveInt('--orbit-bound'),
    )
    .option('--alpha <A>', "with --ctmc: Metafor's alpha (default 0.25)", nonNegative('--alpha'))
    .option(
      '--granularity <G>',
      'with --ctmc: jobs per state step (default: 1, or the least that keeps a load under about half a second)',
      positiveInt('--granularity'),
    )
    .option(
      '--over <DIR>',
      "a lab sweep's results folder (metabench sweep --out DIR) of this experiment over load.rate and/or schedule.trigger.duration, or one run's (metabench run --out DIR: its runs one point at their load and trigger), drawn over the map: each cell model / lab (repeatable)",
      (v: string, prev: string[]) => [...prev, v],
      [] as string[],
    )
    .option(
      '--out <DIR>',
      'write model.md, model.json, map.csv and figures/ here (default: results/<date>-<name>-model)',
    )
    .option('--quiet', 'no progress lines');
  addSetOption(cmd).action(
    async (
      file: string,
      o: {
        scale?: number;
        rates?: string[];
        durations?: number[];
        magnitudes?: string[];
        map: boolean;
        jobs?: number;
        over: string[];
        out?: string;
        quiet?: boolean;
        set: Override[];
        ctmc?: boolean;
        queueBound?: number;
        orbitBound?: number;
        alpha?: number;
        granularity?: number;
        capacity: CapacityMode;
        runtime?: Runtime;
      },
    ) => {
      const e = loadExperimentFile(file, o.set);
      if (o.over.length && !o.map)
        throw new BenchError(
          'E_USAGE',
          '--over draws a lab sweep over the simulated map: it cannot go with --no-map',
        );
      if (o.magnitudes) {
        // One second axis at a time: a map over duration × magnitude is a sweep's factorial.
        if (o.durations)
          throw new BenchError(
            'E_USAGE',
            '--magnitudes and --durations are both the map’s second axis: give one (the magnitude map keeps the file’s duration; set it with --set schedule.trigger.duration=…)',
          );
        if (o.over.length)
          throw new BenchError(
            'E_USAGE',
            '--over places lab points by their trigger duration: it cannot go with --magnitudes',
          );
        if (!o.map)
          throw new BenchError(
            'E_USAGE',
            '--magnitudes is the simulated map’s axis: it cannot go with --no-map',
          );
      }
      const axis = o.magnitudes ? magnitudeAxis(file, o.set, o.magnitudes) : undefined;
      // The map is simulated: a trigger the simulation cannot apply (cpu-limit) is refused
      // here, with the runtime's words, not by a crash in a cell.
      if (o.map) refuseOn(runtimePlugin('sim'), e, file);
      const over: LabSweep[] = o.over.map((d) => readOver(d, file, o.set));
      const scale = o.scale ?? sweepScale(over);
      const runtime = o.runtime ?? sweepRuntime(over);
      const plan = planRun(e, { scale, run: 1, sourceFile: file, ...capacityFor(e, runtime, o.capacity) });
      const prediction = predict(plan);
      const say = (l: string): void => void (o.quiet ? undefined : process.stderr.write(`${l}\n`));
      // The simulated map runs the api with the work the model takes: the declared one
      // stretched to the measured capacity (1 × with the nominal one).
      const mapSets: Override[] =
        prediction.workScale === 1 ? o.set : [...o.set, ...stretchedWork(e, prediction.workScale)];
      for (const s of over) {
        say(
          s.kind === 'run'
            ? `${e.name}: lab run ${s.dir} (runtime ${s.runtime}, --scale ${s.scale}): ${s.points[0]?.runs ?? 0} run${s.points[0]?.runs === 1 ? '' : 's'} at ${s.points[0]?.offeredPerS}/s, ${s.points[0]?.verdict}`
            : `${e.name}: lab sweep ${s.name} (${s.dir}, runtime ${s.runtime}, --scale ${s.scale}): ${s.points.length} point${s.points.length === 1 ? '' : 's'} over ${s.factors.join(' and ')}`,
        );
        for (const n of s.notes) say(`  note: ${n}`);
      }
      const labPoints = over.flatMap((s) => s.points);
      process.stdout.write(
        `${e.name}: fluid prediction\n${plainLines(
          describePrediction(prediction)
            .slice(2)
            .map((l) => l.replace(/^\| (.*) \| (.*) \|$/, '  $1: $2')),
        ).join('\n')}\n`,
      );
      for (const c of prediction.caveats) process.stdout.write(`  not in the model: ${c}\n`);
      let map = null;
      let wallS: number | null = null;
      let join: LabJoin | null = null;
      let magnitudes: MagnitudeModel | null = null;
      if (o.map) {
        const capacity = plan.capacity.usedPerS ?? nominalCapacityPerS(e);
        const readRate = (s: string): number => {
          const pct = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(s);
          if (pct) return Math.round(capacity * Number(pct[1])) / 100;
          const r = parseRate(s.includes('/') || s.includes('capacity') ? s : `${s}/s`);
          if (!r.ok) throw new InvalidArgumentError(`--rates: ${r.message}`);
          return 'perS' in r.value ? r.value.perS : (capacity * r.value.capacityFraction) / 100;
        };
        // With lab sweeps over the map, the lab points' own loads (origins/s, as their runs offered them).
        const rates = o.rates
          ? o.rates.map(readRate)
          : labPoints.length
            ? distinctValues(labPoints.map((p) => p.offeredPerS))
            : ['10%', '20%', '35%', '50%', '70%', '80%', '90%'].map(readRate);
        const d = e.schedule.triggers[0]?.duration ?? 10_000;
        // The lab points' trigger durations, as the file would write them at this scale (the
        // map's axis is the duration after the scale, so each lab point has its cell).
        const durationsMs =
          o.durations ??
          (axis ? [d] : undefined) ??
          (labPoints.length
            ? distinctValues(labPoints.map((p) => p.triggerS)).map((s) => (s * 1000) / scale)
            : [0.1, 0.25, 0.5, 1].map((f) => Math.round(d * f)));
        // The verdict is judged on whole-second buckets: a recovery deadline (k × D, scaled)
        // under 2 s cannot tell a recovery from a collapse.
        const tooShort = durationsMs.filter((ms) => e.recovery.within * ms * scale < 2000);
        if (tooShort.length)
          say(
            `${e.name}: note: with trigger durations of ${tooShort.map((ms) => `${(ms * scale) / 1000} s`).join(', ')} the recovery deadline (${e.recovery.within} × D) is under 2 s, shorter than the verdict's one-second resolution`,
          );
        say(
          axis
            ? `${e.name}: simulating ${rates.length} loads × ${axis.values.length} ${axis.name}s (trigger ${(d * scale) / 1000} s)`
            : `${e.name}: simulating ${rates.length} loads × ${durationsMs.length} trigger durations`,
        );
        const t0 = performance.now();
        map = await simulatedMap(file, {
          rates,
          durationsMs,
          scale,
          ...(axis ? { magnitudes: axis } : {}),
          overrides: mapSets,
          onPoint: (i, n, row, ms) => say(mapProgressLine(i, n, row, ms)),
          jobs: o.jobs ?? availableParallelism(),
          worker: new URL('./simWorker.js', import.meta.url),
        });
        wallS = (performance.now() - t0) / 1000;
        join = labPoints.length ? joinLab(map, labPoints) : null;
        if (axis)
          magnitudes = magnitudeModel(
            prediction.system,
            prediction.replicas,
            axis.kind,
            axis.field,
            distinctValues(map.rows.map((r) => Number(r.factors['offered load']))),
            axis.values.map((v) => v.value),
            (d * scale) / 1000,
          );
        process.stdout.write(
          `\nsimulated map (M metastable, R recovered${join ? '; model / lab, ✗ where they disagree' : ''}${magnitudes && !magnitudes.notPredicted ? "; (model X) where the fluid model's prediction differs" : ''}):\n${plainLines(mapTable(map, prediction.range, join, magnitudes ? predictedAt(magnitudes) : undefined)).join('\n')}\n`,
        );
        if (magnitudes) process.stdout.write(`${plainLines(boundaryLines(magnitudes)).join('\n')}\n`);
        if (join) process.stdout.write(`${plainLines(describeJoin(join).split('\n')).join('\n')}\n`);
      }
      let ctmc: CtmcModel | null = null;
      let ctmcLab: CtmcAtLabPoint[] | null = null;
      if (o.ctmc) {
        const knobs: ChainKnobs = {
          ...(o.queueBound !== undefined ? { queueBound: o.queueBound } : {}),
          ...(o.orbitBound !== undefined ? { orbitBound: o.orbitBound } : {}),
          ...(o.alpha !== undefined ? { alpha: o.alpha } : {}),
          ...(o.granularity !== undefined ? { granularity: o.granularity } : {}),
        };
        const capacity = plan.capacity.usedPerS ?? nominalCapacityPerS(e);
        const rates = map
          ? distinctValues(map.rows.map((r) => Number(r.factors['offered load'])))
          : [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1].map((f) => round(capacity * f, 3));
        const t0 = performance.now();
        // The Markov model of the same api the fluid model took (its work stretched to a measured capacity).
        const eModel = prediction.workScale === 1 ? e : loadExperimentFile(file, mapSets);
        ctmc = ctmcModel(eModel, prediction.offeredPerS, rates, knobs);
        if (join) ctmcLab = ctmcAtLab(eModel, join.points, knobs);
        say(
          `${e.name}: CTMC over ${ctmc.points.length} loads in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
        );
        process.stdout.write(
          `\n${ctmcSection(ctmc, prediction.range)
            .filter((l) => l.startsWith('- ') || l.startsWith('|'))
            .join('\n')}\n`,
        );
      } else if (
        o.queueBound !== undefined ||
        o.orbitBound !== undefined ||
        o.alpha !== undefined ||
        o.granularity !== undefined
      )
        throw new BenchError(
          'E_USAGE',
          '--queue-bound, --orbit-bound, --alpha and --granularity are knobs of --ctmc: add --ctmc',
        );
      const dir = resultsDir(`${e.name}-model`, o.out);
      await writeModel(dir, {
        experiment: e,
        file,
        overrides: describeOverrides(o.set),
        scale,
        prediction,
        map,
        mapWallS: wallS,
        magnitudes,
        lab: join ? { sweeps: over, join } : null,
        ctmc,
        ctmcLab,
      });
      process.stdout.write(`${dir}\n`);
    },
  );
}

/** The runtime of the lab sweeps drawn over the map (their calibration is the one that applies); local without any. */
function sweepRuntime(over: readonly LabSweep[]): Runtime {
  const rs = [...new Set(over.map((s) => s.runtime))];
  if (rs.length > 1)
    throw new BenchError(
      'E_USAGE',
      `the lab sweeps ran on different runtimes (${over.map((s) => `${s.dir}: ${s.runtime}`).join(', ')}); say whose calibration the model uses with --runtime`,
    );
  const r = rs[0] ?? 'local';
  return (RUNTIMES as readonly string[]).includes(r) ? (r as Runtime) : 'local';
}

/** --set overrides that stretch the api's declared work (its default and every cost class) by `k`. */
function stretchedWork(e: Parameters<typeof nominalCapacityPerS>[0], k: number): Override[] {
  const api = e.lab?.api;
  if (!api) return [];
  const ms = (x: number): string => `${+(x * k).toFixed(6)}ms`;
  const source = `the work stretched × ${+k.toFixed(6)} to the measured capacity (--capacity)`;
  return [
    { path: ['lab', 'api', 'work', 'mean'], value: ms(api.work.mean), source },
    ...Object.entries(api.costs ?? {}).map(([name, c]) => ({
      path: ['lab', 'api', 'costs', name, 'mean'],
      value: ms(c.mean),
      source,
    })),
  ];
}

/** The scale the lab sweeps ran at (the map's default with --over); 1 without any. */
function sweepScale(over: readonly LabSweep[]): number {
  const scales = [...new Set(over.map((s) => s.scale))];
  if (scales.length > 1)
    throw new BenchError(
      'E_USAGE',
      `the lab sweeps ran at different scales (${over.map((s) => `${s.dir}: ${s.scale}`).join(', ')}); give the map's with --scale`,
    );
  return scales[0] ?? 1;
}
