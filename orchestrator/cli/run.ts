import type { Command } from 'commander';
import { BenchError } from '../../foundation/errors.js';
import type { ExperimentResult, RunOptions } from '../run/runExperiment.js';
import { twinCapacity } from '../run/runCapacity.js';
import { runSimulated } from '../run/onThread.js';
import { refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { dryRun, formatDryRun } from '../spec/dryRun.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../../foundation/overrides.js';
import { planRun } from '../spec/plan.js';
import { addFailOnOption, enforceGate, type FailOn } from './failOn.js';
import { describeFailed } from '../analysis/validity.js';
import { capacityFor, type CapacityMode } from '../calibrate/capacity.js';
import { DEFAULT_RUNTIME } from '../lab/runtimes.js';
import {
  addAnyScaleOption,
  addCapacityOption,
  addEventsOption,
  addPinOption,
  addReportOption,
  positiveNumber,
  type ReportChoice,
  wholeNumber,
} from './options.js';
import { checkScale } from './scaleCheck.js';
import type { EventsMode } from '../../bench/record/eventLog.js';
import { addSetOption, describeOverrides } from './setOption.js';
import { inHelpGroup } from './help.js';
import { addRuntimeOptions, runtimeContext, type RuntimeFlags } from './runtimeOption.js';
import { join } from 'node:path';
import { onInterrupt } from './interrupt.js';
import type { Experiment } from '../spec/schema.js';
import type { PlannedCapacity } from '../spec/plan.js';
import {
  addPriorityOption,
  addWaitForQuietOption,
  machinePreflight,
  type MachineFlags,
} from './machineOptions.js';

/** The thread a simulated run runs on (it registers the runtimes, as this process does). */
const SIM_WORKER = new URL('./simWorker.js', import.meta.url);

export function register(program: Command): void {
  const cmd = program
    .command('run')
    .description('run an experiment on the lab (or simulate it) and write its results folder')
    .argument('[file]', 'experiment file (YAML); or --from-bundle')
    .option(
      '--from-bundle <FILE>',
      're-run the experiment of a bundle `metabench export bundle` wrote: as it ran, with its runtime, scale, seeds, repetitions and capacity (--runtime, --scale, --seed, --repeat, --capacity given here override those)',
    )
    .option(
      '--scale <F>',
      'multiply every duration of the schedule and of the recovery criterion by F',
      positiveNumber('--scale'),
      1,
    )
    .option(
      '--out <DIR>',
      'write the results here (default: results/<date>-<name>-<runtime>-s<scale>[-set<hash>])',
    )
    .option('--repeat <N>', 'override the number of repetitions', wholeNumber('--repeat', 1, 1000))
    .option('--seed <N>', 'override the experiment seed', wholeNumber('--seed', 0, 2 ** 32 - 1))
    .option('--quiet', 'no status line')
    .option(
      '--twin',
      "also simulate the same experiment (same seed and scale) into DIR/twin/; report.md then shows the lab's figures beside the simulation's, with the difference",
    )
    .option(
      '--dry-run',
      'print the resolved plan (phases, expected origins, trigger timeline, wall time) and exit',
    );
  addSetOption(cmd);
  addFailOnOption(cmd);
  addRuntimeOptions(cmd);
  addPinOption(cmd);
  addPriorityOption(cmd);
  addWaitForQuietOption(cmd);
  addCapacityOption(cmd);
  addAnyScaleOption(cmd);
  addEventsOption(cmd, 'all', "one run's every attempt, for its analysis; the twin writes failures");
  addReportOption(cmd, ['all', 'none'], 'write report.md, report.html, figures/ and data/ at the end');
  inHelpGroup(cmd).action(
    async (
      fileArg: string | undefined,
      o: {
        fromBundle?: string;
        scale: number;
        out?: string;
        repeat?: number;
        seed?: number;
        quiet?: boolean;
        dryRun?: boolean;
        set: Override[];
        failOn?: FailOn[];
        capacity?: CapacityMode;
        twin?: boolean;
        events: EventsMode;
        report: ReportChoice;
        pin?: boolean;
        anyScale?: boolean;
      } & RuntimeFlags &
        MachineFlags,
    ) => {
      if ((fileArg === undefined) === (o.fromBundle === undefined))
        throw new BenchError(
          'E_USAGE',
          fileArg === undefined
            ? 'run takes an experiment file, or --from-bundle FILE'
            : 'run takes an experiment file or --from-bundle FILE, not both',
        );
      const bundle =
        o.fromBundle !== undefined
          ? await (await import('../export/openBundle.js')).openBundle(o.fromBundle)
          : null;
      try {
        const given = (name: string) => cmd.getOptionValueSource(name) === 'cli';
        if (bundle && o.set.length > 0)
          throw new BenchError(
            'E_USAGE',
            '--set goes with an experiment file; a bundle re-runs its experiment as it ran',
          );
        const runtime =
          bundle && !given('runtime')
            ? (bundle.info.runtime as typeof o.runtime)
            : (o.runtime ?? DEFAULT_RUNTIME);
        const scale = bundle && !given('scale') ? bundle.info.scale : o.scale;
        // A bundle's run offers the rate the original did: the capacity it recorded, unless --capacity says otherwise.
        const planned: PlannedCapacity | undefined =
          bundle && o.capacity === undefined ? bundle.info.capacity : undefined;
        const file = fileArg ?? o.fromBundle!;
        // Paths in the experiment are relative to its file; a bundle's experiment has none to resolve.
        const sourceFile = bundle ? undefined : file;
        const origin = bundle ? { experimentFile: null, fromBundle: o.fromBundle } : { experimentFile: file };
        if (o.twin && runtimePlugin(runtime).capabilities.virtualTime)
          throw new BenchError(
            'E_USAGE',
            '--twin simulates a lab run: it goes with the local or docker runtime, not --runtime sim',
          );
        const declared: Experiment = bundle ? bundle.experiment : loadExperimentFile(file, o.set);
        const experiment = {
          ...declared,
          ...(o.repeat !== undefined ? { repeat: o.repeat } : {}),
          ...(o.seed !== undefined ? { seed: o.seed } : {}),
        };
        // What a runtime cannot run is refused before anything runs (a twin's, before the lab runs).
        for (const r of o.twin ? [runtime, 'sim' as const] : [runtime])
          refuseOn(runtimePlugin(r), experiment, file);
        const plan = planRun(experiment, {
          scale,
          run: 1,
          sourceFile,
          ...(planned ? { planned } : capacityFor(experiment, runtime, o.capacity)),
        });
        // A scale below the experiment's limits is another experiment (DESIGN.md §2 "Scale").
        // A bundle re-runs what ran: the scale it ran at is not refused again (it is warned of).
        const scaleLimitsWaived = checkScale(
          [{ plan, file: sourceFile }],
          o.anyScale === true || (bundle !== null && scale === bundle.info.scale),
        );
        if (o.dryRun) {
          process.stdout.write(
            formatDryRun(plan, dryRun(plan, experiment.repeat), {
              name: runtime,
              virtualTime: runtimePlugin(runtime).capabilities.virtualTime,
            }),
          );
          return;
        }

        const lab = {
          ...(await runtimeContext({ ...o, runtime })),
          ...(o.pin !== undefined ? { pin: o.pin } : {}),
          ...(o.priority !== undefined ? { priority: o.priority } : {}),
        };
        // A busy machine makes the schedule slip: warn (and with --wait-for-quiet, wait) first.
        await machinePreflight(runtime, o, { quiet: Boolean(o.quiet) });
        // Ctrl-C / SIGTERM: stop the schedule, undo the trigger, stop the lab, keep what was measured.
        const interrupt = onInterrupt({
          stopping:
            'stopping — undoing the trigger, stopping the lab, writing what was measured (again to force)',
          forced: 'forced exit',
        });
        try {
          // A large simulation runs on a thread of its own (orchestrator/run/onThread.ts says why).
          const run = (e: Experiment, opts: RunOptions): Promise<ExperimentResult> =>
            opts.runtime !== undefined && runtimePlugin(opts.runtime).capabilities.virtualTime
              ? runSimulated(e, opts, SIM_WORKER)
              : import('../run/runExperiment.js').then((m) => m.runExperiment(e, opts));
          const report = o.report !== 'none';
          // What to read about a run: its report, or without one its summary.
          const readMe = report ? 'report.md' : 'summary.json';
          const result = await run(experiment, {
            scale,
            out: o.out,
            quiet: Boolean(o.quiet),
            stop: interrupt.stop,
            sourceFile,
            runtime,
            lab,
            capacity: o.capacity,
            planned,
            events: o.events,
            report,
            overrides: describeOverrides(o.set),
            manifestExtra: {
              command: process.argv.slice(2),
              ...origin,
              overrides: describeOverrides(o.set),
              ...(scaleLimitsWaived.length ? { scaleLimitsWaived } : {}),
            },
          });
          if (o.twin && !interrupt.stop.aborted) {
            // The simulated twin: the same file, seed and scale in virtual time, then the
            // lab's report again, now with the comparison.
            await run(experiment, {
              scale,
              // report/load.js is imported here: a run without a twin need not load the report's reader (csv-parse).
              out: join(result.dir, (await import('../report/load.js')).TWIN_DIR),
              quiet: Boolean(o.quiet),
              stop: interrupt.stop,
              sourceFile,
              runtime: 'sim',
              // At the rate the lab ran: the capacity its manifest recorded, not one resolved again.
              planned: twinCapacity(result.dir),
              // A twin is compared by its figures; its successes would only fill the disk.
              events: o.events === 'none' ? 'none' : 'failures',
              report,
              manifestExtra: {
                command: process.argv.slice(2),
                ...origin,
                overrides: describeOverrides(o.set),
                ...(scaleLimitsWaived.length ? { scaleLimitsWaived } : {}),
                twinOf: result.dir,
              },
            });
            if (report) await (await import('../report/writeReport.js')).writeReport(result.dir);
          }
          process.stdout.write(`${result.dir}\n`);
          // The re-run beside the original: the command that compares them (stderr; stdout stays the folder).
          if (o.fromBundle !== undefined)
            process.stderr.write(
              `compare with the bundled run: ${(await import('../export/compareHint.js')).compareHint(o.fromBundle, result.dir)}\n`,
            );
          if (interrupt.stop.aborted)
            throw new BenchError('E_INTERRUPTED', `interrupted; partial results are in ${result.dir}`);
          // An invalid run is unusable too; it is told below, with its failed checks.
          if (result.runs.some((r) => !r.usable && r.outcome !== 'invalid'))
            throw new BenchError(
              'E_RUN_UNUSABLE',
              `a run is unusable (offered != recorded or interrupted); see ${result.dir}/${readMe}`,
            );
          // An invalid run gets no verdict; --fail-on invalid says so with the gate's own code.
          const invalid = result.runs.filter((r) => r.outcome === 'invalid');
          if (invalid.length > 0 && !o.failOn?.includes('invalid'))
            throw new BenchError(
              'E_RUN_UNUSABLE',
              `${invalid.length} of ${result.runs.length} runs invalid, so no verdict:\n  ${invalid
                .flatMap((r) => describeFailed(r.validity).map((f) => `run ${r.run}: ${f}`))
                .join('\n  ')}\nsee ${result.dir}/${readMe}`,
            );
          enforceGate(result.runs, o.failOn);
        } finally {
          interrupt.dispose();
        }
      } finally {
        bundle?.close();
      }
    },
  );
}
