import { InvalidArgumentError, type Command } from 'commander';
import { CAPACITY_MODES, parseCapacityMode } from '../calibrate/capacity.js';
import { parseRuntime, RUNTIMES } from '../lab/runtimes.js';
import type { EventsMode } from '../../bench/record/eventLog.js';

export function positiveNumber(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} takes a number greater than 0 (got "${v}")`);
    return n;
  };
}

export function wholeNumber(flag: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max} (got "${v}")`);
    return n;
  };
}

/** `--runtime <name>` (run, sweep, calibrate): where the lab runs; validated, recorded in manifest.json. */
export function addRuntimeOption(cmd: Command, what = 'the lab'): Command {
  return cmd.option(
    `--runtime <name>`,
    `where ${what} runs: ${RUNTIMES.join(' | ')} (default: local)`,
    parseRuntime,
  );
}

/** `--pin` / `--no-pin` (run, sweep, calibrate): the local lab's CPU pinning (lab/local/pinning.ts); neither: by the CPU count. */
export function addPinOption(cmd: Command): Command {
  return cmd
    .option(
      '--pin',
      'local runtime: pin the generator and the lab to disjoint CPUs on any machine with at least 2 (default: pinned from 4 CPUs)',
    )
    .option('--no-pin', 'local runtime: do not pin the generator and the lab to disjoint CPUs');
}

/** `--capacity auto|nominal|measured` (run, sweep): which capacity `% capacity` rates resolve against. */
export function addCapacityOption(cmd: Command): Command {
  return cmd.option(
    '--capacity <source>',
    `which capacity "% capacity" rates use: ${CAPACITY_MODES.join(' | ')} (default auto: the one metabench calibrate measured for this lab on this machine, else the nominal one)`,
    parseCapacityMode,
  );
}

/**
 * eventLog.ts's EVENTS_MODES said again (options.test holds them equal): importing it would load
 * the event log's writers and apache-arrow into every command that only parses `--events`.
 */
export const EVENTS_MODES: readonly EventsMode[] = ['all', 'failures', 'none', 'ndjson'];

/**
 * `--events all|failures|none|ndjson` (run, sweep): which events each run writes to its
 * event log (events.arrow, or events.ndjson.gz). `dflt` is the command's default, said in the help.
 */
export function addEventsOption(cmd: Command, dflt: EventsMode, why: string): Command {
  return cmd.option(
    '--events <which>',
    `which events each run writes to run-<i>/events.arrow: all | failures (no successful attempt or outcome) | none | ndjson (all, as run-<i>/events.ndjson.gz) (default ${dflt}: ${why})`,
    (v: string): EventsMode => {
      if (!(EVENTS_MODES as readonly string[]).includes(v))
        throw new InvalidArgumentError(`--events takes one of ${EVENTS_MODES.join(', ')} (got "${v}")`);
      return v as EventsMode;
    },
    dflt,
  );
}

/**
 * `--any-scale` (run, sweep): run at a scale below the smallest one the experiment
 * accepts (orchestrator/spec/scaleLimits.ts), which is refused otherwise. For tests of
 * the machinery, never for results: the run is another experiment than the file's, says
 * so on stderr and records the limits it broke in its manifest (scaleLimitsWaived).
 */
export function addAnyScaleOption(cmd: Command): Command {
  return cmd.option(
    '--any-scale',
    'run even at a scale below the smallest the experiment accepts (refused otherwise; the manifest records the limits broken): for testing the machinery, not for results',
  );
}

/** What `--report` writes at the end: every report (the default), the sweep's own only, or none. */
export type ReportChoice = 'all' | 'sweep' | 'none';

/**
 * `--report all|none` (run) and `all|sweep|none` (sweep): whether report.md, report.html,
 * figures/ and data/ are written at the end. Drawing the figures takes longer than
 * simulating a recovering run; a script that reads summary.json and the records skips it,
 * and `metabench report DIR` writes the report later from the folder alone.
 */
export function addReportOption(cmd: Command, choices: readonly ReportChoice[], what: string): Command {
  return cmd.option(
    '--report <which>',
    `${what}: ${choices.join(' | ')} (default all; \`metabench report DIR\` writes a report later from the folder)`,
    (v: string): ReportChoice => {
      if (!(choices as readonly string[]).includes(v))
        throw new InvalidArgumentError(`--report takes one of ${choices.join(', ')} (got "${v}")`);
      return v as ReportChoice;
    },
    'all' as ReportChoice,
  );
}
