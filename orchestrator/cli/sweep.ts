import { runtimePlugin } from '../lab/RuntimePlugin.js';
import type { Command } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import type { Override } from '../../foundation/overrides.js';
import { dryRun } from '../spec/dryRun.js';
import { formatRange, simulatedRunS } from '../spec/simTime.js';
import { planRun } from '../spec/plan.js';
import { loadSweepFile, type LoadedSweep, type SweepSpec } from '../spec/sweep.js';
import type { Factor, SweepPoint } from '../spec/sweepPlan.js';
import type { PlannedCapacity } from '../spec/plan.js';
import { openSweepBundle, type OpenedSweepBundle } from '../export/openBundle.js';
import { compareHint } from '../export/compareHint.js';
import { describePoint, runSweep } from '../sweep/runSweep.js';
import { capacityFor, type CapacityMode } from '../calibrate/capacity.js';
import type { Runtime } from '../lab/runtimes.js';
import {
  addAnyScaleOption,
  addCapacityOption,
  addEventsOption,
  addPinOption,
  addReportOption,
  addRuntimeOption,
  positiveNumber,
  wholeNumber,
  type ReportChoice,
} from './options.js';
import { addComposeOptions, composeOptions } from './runtimeOption.js';
import { checkScale } from './scaleCheck.js';
import type { EventsMode } from '../../bench/record/eventLog.js';
import { addSetOption, describeOverrides } from './setOption.js';
import { inHelpGroup } from './help.js';
import { onInterrupt } from './interrupt.js';
import {
  addPriorityOption,
  addWaitForQuietOption,
  machinePreflight,
  type MachineFlags,
} from './machineOptions.js';
import { DEFAULT_MAX_RERUNS } from '../sweep/rerunInvalid.js';
import { describeTally, isValid, tallyOutcomes } from '../analysis/tally.js';
import { resumedSweep } from './resumeSweep.js';

export function register(program: Command): void {
  const cmd = program
    .command('sweep')
    .description(
      'run an experiment at every point of a sweep (one factor at a time, or factorial) and write the sweep table',
    )
    .argument('[file]', 'sweep file (YAML); or --from-bundle')
    .option(
      '--from-bundle <FILE>',
      're-run the sweep of a bundle `metabench export bundle` wrote: every point with results in it, as it ran (its resolved experiment and capacity, the runtime, scale and repetitions; --runtime, --scale, --repeat and --capacity given here override those)',
    )
    .option(
      '--scale <F>',
      'multiply every duration of the schedule and of the recovery criterion by F',
      positiveNumber('--scale'),
      1,
    )
    .option(
      '--out <DIR>',
      'write the results here; the folder of an unfinished run of the same sweep resumes it',
    )
    .option(
      '--resume <DIR>',
      'resume the sweep in DIR (its sweep-plan.json): complete points are skipped; without a file, the sweep file and --set it recorded are read again',
    )
    .option(
      '--rerun-invalid',
      'also re-run the invalid runs of every complete point (each with its own seed), until each is valid or has been re-run --max-reruns times; their folders are kept as run-<i>.invalid-<n>',
    )
    .option(
      '--max-reruns <N>',
      `with --rerun-invalid: re-runs of one invalid run at most (default ${DEFAULT_MAX_RERUNS})`,
      wholeNumber('--max-reruns', 1, 100),
    )
    .option('--repeat <N>', 'runs per point (overrides the sweep file)', wholeNumber('--repeat', 1, 1000))
    .option('--dry-run', 'print the points and the time they would take, and exit')
    .option(
      '--twin',
      "also simulate each point (same experiment, seeds and scale) into point-<k>/twin/: each point's report shows the lab beside the simulation, and the sweep table both verdicts",
    )
    .option(
      '--jobs <N>',
      "simulated points run at once, each in a thread of its own (default: the machine's cores); lab points run one at a time",
      wholeNumber('--jobs', 1, 256),
    )
    .option('--quiet', 'no status line');
  addRuntimeOption(cmd, "the sweep's points");
  addPinOption(cmd);
  addPriorityOption(cmd);
  addWaitForQuietOption(cmd);
  addComposeOptions(cmd);
  addCapacityOption(cmd);
  addAnyScaleOption(cmd);
  addEventsOption(
    cmd,
    'failures',
    "a sweep is read through its table and figures; every point's successes would fill the disk",
  );
  addReportOption(
    cmd,
    ['all', 'sweep', 'none'],
    "write each point's report and the sweep's (all), the sweep's only, or none",
  );
  inHelpGroup(addSetOption(cmd)).action(
    async (
      fileArg: string | undefined,
      o: {
        fromBundle?: string;
        scale: number;
        out?: string;
        resume?: string;
        rerunInvalid?: boolean;
        maxReruns?: number;
        repeat?: number;
        dryRun?: boolean;
        quiet?: boolean;
        set: Override[];
        runtime?: Runtime;
        capacity?: CapacityMode;
        twin?: boolean;
        events: EventsMode;
        report: ReportChoice;
        jobs?: number;
        pin?: boolean;
        project: string;
        envFile?: string;
        anyScale?: boolean;
      } & MachineFlags,
    ) => {
      if (o.resume !== undefined) {
        if (o.out !== undefined && o.out !== o.resume)
          throw new BenchError('E_USAGE', '--resume DIR writes into DIR: give --resume or --out, not both');
        if (o.fromBundle !== undefined)
          throw new BenchError('E_USAGE', '--resume goes with a sweep file (or none), not --from-bundle');
        const resumed = resumedSweep(o.resume, fileArg, o.set);
        await sweep(resumed.sweep, {
          ...o,
          out: o.resume,
          scale: cmd.getOptionValueSource('scale') === 'cli' ? o.scale : resumed.scale,
          // The scale the sweep began at was checked (or --any-scale'd) then: resuming it is not refused again.
          anyScale: o.anyScale === true || cmd.getOptionValueSource('scale') !== 'cli',
          ...((o.repeat ?? resumed.repeat) ? { repeat: (o.repeat ?? resumed.repeat)! } : {}),
          ...((o.runtime ?? resumed.runtime) ? { runtime: (o.runtime ?? resumed.runtime)! } : {}),
          sets: resumed.sets,
        });
        return;
      }
      if (o.maxReruns !== undefined && !o.rerunInvalid)
        throw new BenchError('E_USAGE', '--max-reruns goes with --rerun-invalid');
      if ((fileArg === undefined) === (o.fromBundle === undefined))
        throw new BenchError(
          'E_USAGE',
          fileArg === undefined
            ? 'sweep takes a sweep file, or --from-bundle FILE'
            : 'sweep takes a sweep file or --from-bundle FILE, not both',
        );
      if (o.fromBundle !== undefined && o.set.length > 0)
        throw new BenchError('E_USAGE', '--set goes with a sweep file; a bundle re-runs its sweep as it ran');
      const bundle = o.fromBundle !== undefined ? await openSweepBundle(o.fromBundle) : null;
      try {
        await sweep(bundle ? sweepOfBundle(bundle) : loadSweepFile(fileArg!, o.set), {
          ...o,
          // A bundle's sweep runs at its own scale unless --scale says otherwise.
          scale: bundle && cmd.getOptionValueSource('scale') !== 'cli' ? bundle.plan.scale : o.scale,
          sets: bundle ? (bundle.plan.overrides ?? []) : describeOverrides(o.set),
          // A bundle re-runs what ran: the scale it ran at is not refused again (it is warned of).
          anyScale: o.anyScale === true || (bundle !== null && cmd.getOptionValueSource('scale') !== 'cli'),
          ...(bundle && o.capacity === undefined
            ? { planned: (p: SweepPoint) => bundle.points.get(p.index)?.capacity }
            : {}),
        });
      } finally {
        bundle?.close();
      }
    },
  );
}

/** A bundle's sweep as `runSweep` takes it: its plan, and each point with results as it ran. */
function sweepOfBundle(b: OpenedSweepBundle): LoadedSweep {
  const plan = b.plan;
  const first = [...b.points.values()][0]?.experiment;
  if (!first) throw new BenchError('E_USAGE', 'the bundle holds no point with results: nothing to re-run');
  return {
    file: plan.file ?? '',
    experimentFile: plan.experimentFile ?? '',
    sweep: {
      name: plan.name,
      experiment: plan.experimentFile ?? '',
      design: plan.design as SweepSpec['design'],
      factors: plan.factors.map((f) => ({ path: f.path, values: [...f.values], reference: f.reference })),
      repeat: plan.repeat,
      runtime: plan.runtime as Runtime,
    },
    factors: plan.factors as unknown as Factor[],
    points: (plan.points as unknown as SweepPoint[]).filter((p) => b.points.has(p.index)),
    // Index i is point i + 1; a point the bundle has no results of is not run.
    experiments: plan.points.map((p) => b.points.get(p.index)?.experiment ?? first),
    overrides: plan.points.map(() => []),
  };
}

async function sweep(
  s: LoadedSweep,
  o: {
    scale: number;
    out?: string;
    repeat?: number;
    dryRun?: boolean;
    quiet?: boolean;
    sets: readonly string[];
    runtime?: Runtime;
    capacity?: CapacityMode;
    planned?: (p: SweepPoint) => PlannedCapacity | undefined;
    fromBundle?: string;
    twin?: boolean;
    events: EventsMode;
    report: ReportChoice;
    jobs?: number;
    pin?: boolean;
    project: string;
    envFile?: string;
    rerunInvalid?: boolean;
    maxReruns?: number;
    anyScale?: boolean;
  } & MachineFlags,
): Promise<void> {
  // --runtime overrides the sweep file's runtime.
  const runtime: Runtime = o.runtime ?? s.sweep.runtime;
  if (o.twin && runtimePlugin(runtime).capabilities.virtualTime)
    throw new BenchError('E_USAGE', '--twin simulates a lab sweep: it goes with the local or docker runtime');
  const repeat = o.repeat ?? s.sweep.repeat ?? s.experiments[0]!.repeat;
  // Every point at this scale within its experiment's limits (DESIGN.md §2 "Scale").
  checkScale(
    s.points.map((p) => {
      const e = s.experiments[p.index - 1]!;
      const planned = o.planned?.(p);
      return {
        plan: planRun(e, {
          scale: o.scale,
          run: 1,
          sourceFile: s.experimentFile,
          ...(planned ? { planned } : capacityFor(e, runtime, o.capacity)),
        }),
        file: s.experimentFile || undefined,
        label: `point ${p.index}${p.varied ? ` (${p.varied})` : ''}`,
      };
    }),
    o.anyScale,
  );
  if (o.dryRun) {
    let totalS = 0;
    let simS: { lowS: number; highS: number } | null = { lowS: 0, highS: 0 };
    const lines = [
      `${s.sweep.name}: ${s.points.length} points × ${repeat} runs (${s.sweep.design}, runtime ${runtime})`,
    ];
    for (const p of s.points) {
      const e = s.experiments[p.index - 1]!;
      const planned = o.planned?.(p);
      const plan = planRun(e, {
        scale: o.scale,
        run: 1,
        sourceFile: s.experimentFile,
        ...(planned ? { planned } : capacityFor(e, runtime, o.capacity)),
      });
      const d = dryRun(plan, repeat);
      totalS += d.totalS;
      // Simulated: the simulator's speed, not the schedule's length (spec/simTime.ts).
      const sim = runtimePlugin(runtime).capabilities.virtualTime ? simulatedRunS(plan) : null;
      if (sim) simS = simS && { lowS: simS.lowS + sim.lowS * repeat, highS: simS.highS + sim.highS * repeat };
      else simS = null;
      lines.push(
        `  point ${p.index}${p.varied ? ` (${p.varied})` : ''}: ${describePoint(p)}  ≈ ${sim ? formatRange(sim.lowS * repeat, sim.highS * repeat) : `${Math.round(d.totalS)} s`}; capacity ${plan.capacity.usedPerS === null ? 'unknown' : `${+plan.capacity.usedPerS.toFixed(3)}/s ${plan.capacity.source}`}`,
      );
    }
    lines.push(
      simS
        ? `  wall time: simulated, ≈ ${formatRange(simS.lowS, simS.highS)} on an idle core (the simulator's measured speed, orchestrator/spec/simTime.ts; --jobs runs points side by side)`
        : `  wall time: ≈ ${Math.round(totalS)} s (plus lab start-up per run)`,
    );
    process.stdout.write(lines.join('\n') + '\n');
    return;
  }
  // Once, before the first point: a point's own load would set off the next one's.
  await machinePreflight(runtime, o, { quiet: Boolean(o.quiet) });
  const interrupt = onInterrupt({
    stopping: 'stopping the sweep after undoing the trigger; rerun with --resume DIR to resume',
    forced: 'forced exit; rerun with --resume DIR to resume',
  });
  try {
    const r = await runSweep(s, {
      scale: o.scale,
      out: o.out,
      repeat: o.repeat,
      quiet: Boolean(o.quiet),
      stop: interrupt.stop,
      sets: o.sets,
      runtime,
      ...(runtimePlugin(runtime).capabilities.compose ? { docker: composeOptions(o) } : {}),
      ...(o.pin !== undefined ? { pin: o.pin } : {}),
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      capacity: o.capacity,
      planned: o.planned,
      events: o.events,
      pointReports: o.report === 'all',
      report: o.report !== 'none',
      jobs: o.jobs,
      pointWorker: new URL('./simWorker.js', import.meta.url),
      ...(o.twin ? { twin: true } : {}),
      ...(o.rerunInvalid ? { rerunInvalid: true, maxReruns: o.maxReruns } : {}),
      manifestExtra: {
        command: process.argv.slice(2),
        ...(o.fromBundle ? { fromBundle: o.fromBundle } : {}),
      },
    });
    process.stdout.write(`${r.dir}\n`);
    if (o.fromBundle !== undefined)
      process.stderr.write(
        `compare with the bundled sweep: ${compareHint(
          o.fromBundle,
          r.dir,
          s.points.map((p) => `point-${p.index}`),
        )}\n`,
      );
    if (interrupt.stop.aborted)
      throw new BenchError(
        'E_INTERRUPTED',
        `interrupted; \`metabench sweep --resume ${r.dir}\` resumes the sweep`,
      );
    const unusable = r.results.filter((p) => p.runs.some((x) => !x.usable && isValid(x)));
    if (unusable.length)
      throw new BenchError(
        'E_RUN_UNUSABLE',
        `a run is unusable in point ${unusable.map((p) => p.point.index).join(', ')}; see ${r.dir}/sweep.md`,
      );
    // Invalid runs give no verdict: the same exit as `run` with an invalid run (11).
    const invalid = r.results.filter((p) => p.runs.some((x) => !isValid(x)));
    if (invalid.length)
      throw new BenchError(
        'E_RUN_UNUSABLE',
        `invalid runs, so no verdict from them, in point ${invalid
          .map((p) => `${p.point.index} (${describeTally(tallyOutcomes(p.runs))})`)
          .join(', ')}; see ${r.dir}/report.md`,
        `each point's report says why and what to do; \`metabench sweep --resume ${r.dir} --rerun-invalid\` re-runs only the invalid runs`,
      );
  } finally {
    interrupt.dispose();
  }
}
