import { runtimePlugin } from '../lab/RuntimePlugin.js';
import { InvalidArgumentError, type Command } from 'commander';
import { calibrationFile } from '../calibrate/store.js';
import { planCalibration, runCalibration } from '../calibrate/runCalibration.js';
import { DEFAULT_RULE } from '../calibrate/saturation.js';
import { DEFAULT_REFINE, DEFAULT_SETTLE_MS, DEFAULT_STEP_MS, OVERLOAD_FACTOR } from '../calibrate/steps.js';
import { BenchError } from '../../foundation/errors.js';
import { DEFAULT_RUNTIME, type Runtime } from '../lab/runtimes.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../../foundation/overrides.js';
import {
  formatDuration,
  parseDuration,
  parsePercent,
  parseRate,
  type RateSpec,
} from '../../foundation/units.js';
import { addPinOption, addRuntimeOption, positiveNumber, wholeNumber } from './options.js';
import { addComposeOptions, composeOptions } from './runtimeOption.js';
import { addSetOption, describeOverrides } from './setOption.js';
import { onInterrupt } from './interrupt.js';

export function register(program: Command): void {
  const cmd = program
    .command('calibrate')
    .description(
      "step test on the experiment's lab: find the saturation point, store it as this lab's capacity on this machine",
    )
    .argument('<file>', 'experiment file (YAML): its lab, workload mix, arrival law and client timeout')
    .option(
      '--scale <F>',
      'multiply the step and settling durations by F (rates stay as declared)',
      positiveNumber('--scale'),
      1,
    )
    .option('--out <DIR>', 'write the results here (default: results/<date>-<name>-calibration)')
    .option(
      '--steps <rates>',
      'the ladder, comma-separated: absolute (100/s) or of the nominal capacity (50% or 50% capacity); default 20%,40%,60%,80%,90%,100%,110%,120%,150%,200%',
      parseSteps,
    )
    .option(
      '--step-duration <D>',
      `each step's length (default ${formatDuration(DEFAULT_STEP_MS)}; whole seconds, at least 2 s after --scale)`,
      durationOption('--step-duration'),
    )
    .option(
      '--settle <D>',
      `the start of each step that is not measured (default ${formatDuration(DEFAULT_SETTLE_MS)}; whole seconds, at least 1 s)`,
      durationOption('--settle'),
    )
    .option(
      '--refine <N>',
      `bisections between the saturation step and the step above it (default ${DEFAULT_REFINE})`,
      wholeNumber('--refine', 0, 10),
    )
    .option(
      '--tolerance <P>',
      `a step is sustained while goodput >= (1 - P) x offered (default ${DEFAULT_RULE.tolerance * 100}%)`,
      percentOption,
    )
    .option(
      '--latency-factor <K>',
      `a step is sustained while p99 <= K x the lowest step's p99 (default ${DEFAULT_RULE.latencyFactor})`,
      latencyFactor,
    )
    .option('--no-store', 'do not store the capacity found (the results folder is written all the same)')
    .option('--dry-run', 'print the step plan and where the capacity would be stored, and exit')
    .option('--quiet', 'no status line');
  addRuntimeOption(cmd);
  addPinOption(cmd);
  addComposeOptions(cmd);
  addSetOption(cmd).action(
    async (
      file: string,
      o: {
        scale: number;
        out?: string;
        steps?: RateSpec[];
        stepDuration?: number;
        settle?: number;
        refine?: number;
        tolerance?: number;
        latencyFactor?: number;
        store: boolean;
        dryRun?: boolean;
        quiet?: boolean;
        set: Override[];
        runtime?: Runtime;
        pin?: boolean;
        project: string;
        envFile?: string;
      },
    ) => {
      const e = loadExperimentFile(file, o.set);
      const runtime = o.runtime ?? DEFAULT_RUNTIME;
      const opts = {
        scale: o.scale,
        out: o.out,
        steps: o.steps,
        stepMs: o.stepDuration,
        settleMs: o.settle,
        refine: o.refine,
        rule: {
          tolerance: o.tolerance ?? DEFAULT_RULE.tolerance,
          latencyFactor: o.latencyFactor ?? DEFAULT_RULE.latencyFactor,
        },
        runtime,
        ...(runtimePlugin(runtime).capabilities.compose ? { docker: composeOptions(o) } : {}),
        ...(o.pin !== undefined ? { pin: o.pin } : {}),
        quiet: Boolean(o.quiet),
        sourceFile: file,
        store: o.store,
      };
      if (o.dryRun) {
        const p = planCalibration(e, opts);
        process.stdout.write(
          [
            `${e.name}: step test on the ${runtime} lab (seed ${e.seed}, scale ${o.scale})`,
            `  ${p.nominalPerS === null ? 'no nominal capacity (your own system)' : `nominal capacity ${+p.nominalPerS.toFixed(3)}/s`}; ${e.load.arrival} arrivals${e.load.mix ? `, mix ${e.load.mix.map((c) => c.name).join(', ')}` : ''}`,
            `  steps: ${p.ladderPerS.map((r) => `${r}/s`).join(', ')}`,
            `  each ${formatDuration(p.stepMs)}, the first ${formatDuration(p.settleMs)} not measured; the api drains between steps`,
            `  then up to ${p.refine} bisection${p.refine === 1 ? '' : 's'} above the saturation step, and one step at ${OVERLOAD_FACTOR * 100}% of it`,
            `  rule: sustained while goodput >= ${+((1 - p.rule.tolerance) * 100).toFixed(2)}% of offered and p99 <= ${p.rule.latencyFactor} x the lowest step's p99`,
            `  wall time: ≈ ${formatDuration(p.maxWallMs)} at most (plus drains and lab start-up)`,
            `  capacity stored in: ${o.store ? calibrationFile(e, runtime) : 'nowhere (--no-store)'}`,
          ].join('\n') + '\n',
        );
        return;
      }
      const interrupt = onInterrupt({
        stopping: 'stopping the step test; what was measured is written',
        forced: 'forced exit',
      });
      try {
        const { dir, result } = await runCalibration(e, {
          ...opts,
          stop: interrupt.stop,
          manifestExtra: {
            command: process.argv.slice(2),
            experimentFile: file,
            overrides: describeOverrides(o.set),
          },
        });
        const say = (l: string): void => {
          if (!o.quiet) process.stderr.write(`${l}\n`);
        };
        if (result.saturation) {
          say(
            `saturation point ${result.saturation.offeredPerS}/s (goodput ${result.saturation.goodputPerS}/s); ` +
              `margin ${result.margin.ratio === null ? `– (${result.margin.note})` : `${result.margin.ratio}x`}; ` +
              `goodput at 150%: ${result.overload?.goodputPerS ?? '–'}/s`,
          );
        } else say(`no saturation point: ${result.reason}`);
        say(
          'file' in result.stored
            ? `stored: ${result.stored.file}`
            : `not stored: ${result.stored.notStored}`,
        );
        process.stdout.write(`${dir}\n`);
        if (interrupt.stop.aborted)
          throw new BenchError('E_INTERRUPTED', `interrupted; partial results are in ${dir}`);
      } finally {
        interrupt.dispose();
      }
    },
  );
}

function parseSteps(v: string): RateSpec[] {
  const out: RateSpec[] = [];
  for (const part of v.split(',').map((x) => x.trim())) {
    const r = parseRate(/%\s*$/.test(part) ? `${part} capacity` : part);
    if (!r.ok) throw new InvalidArgumentError(`--steps: ${r.message}`);
    const perS = 'perS' in r.value ? r.value.perS : null;
    if (
      (perS !== null && !(perS > 0 && perS <= 1_000_000)) ||
      ('capacityFraction' in r.value && !(r.value.capacityFraction > 0))
    )
      throw new InvalidArgumentError(`--steps: "${part}" must be a rate above 0`);
    out.push(r.value);
  }
  if (out.length < 2) throw new InvalidArgumentError('--steps takes at least two rates');
  return out;
}

function durationOption(flag: string) {
  return (v: string): number => {
    const r = parseDuration(v);
    if (!r.ok || !(r.value > 0) || r.value > 3_600_000)
      throw new InvalidArgumentError(`${flag} takes a duration from 1s to 1h, such as 20s (got "${v}")`);
    return r.value;
  };
}

function percentOption(v: string): number {
  const r = parsePercent(v);
  if (!r.ok || !(r.value > 0) || r.value >= 1)
    throw new InvalidArgumentError(
      `--tolerance takes a percentage above 0% and below 100%, such as 5% (got "${v}")`,
    );
  return r.value;
}

function latencyFactor(v: string): number {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 1 || n > 1000)
    throw new InvalidArgumentError(`--latency-factor takes a number above 1, such as 10 (got "${v}")`);
  return n;
}
