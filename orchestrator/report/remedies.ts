import type { MachineSample, MachineState } from '../results/machineState.js';

/**
 * What to do about an invalid run (DESIGN.md §2: "an invalid report names, with the failed
 * check, the machine's load at the time and the remedies that fit"). Pure: the failed
 * checks, the machine's state, the runtime, the pinning and the twin come in as data; the
 * remedies that fit come out in the order a reader should try them. The chooser keys on the
 * check's name only, never on its wording (a check's `what`, `value` and `limit` may be
 * reworded, e.g. when the lag check becomes a replay in simulation).
 */

export type { MachineSample, MachineState };

/** A failed validity check as summary.json records it; only `check` is keyed on. */
export interface FailedCheck {
  readonly check: string;
  readonly what: string;
  readonly value: number | string | null;
  readonly limit: number | string;
}

export interface RemedyInput {
  readonly failed: readonly FailedCheck[];
  /** Absent: not recorded (an older folder, or the simulation). */
  readonly machine: MachineState | null;
  readonly runtime: string;
  /** Whether the generator and the lab were pinned to disjoint CPUs; null when not recorded. */
  readonly pinned: boolean | null;
  /** The machine's cores (the manifest's), for whether `--pin` can split them. */
  readonly cores: number;
  /** The command that runs it again, as the reader types it. */
  readonly rerun: string;
  /** The simulation of the same file: its verdict when the folder has one (DIR/twin), else null. */
  readonly twinVerdict: string | null;
  /** The errors of triggers that failed to apply or to be undone, as the run recorded them. */
  readonly triggerErrors: readonly string[];
  /** The run was stopped before its schedule ended (Ctrl-C, SIGTERM, an error). */
  readonly interrupted: boolean;
}

export type RemedyKind =
  | 'close-busy'
  | 'rerun'
  | 'pin'
  | 'wait-for-quiet'
  | 'twin'
  | 'raise-limit'
  | 'lower-load'
  | 'warm-up'
  | 'calibrate'
  | 'loosen-hypothesis'
  | 'trigger-error'
  | 'lab-reset'
  | 'seed';

export interface Remedy {
  readonly kind: RemedyKind;
  readonly text: string;
}

/** Checks the load generator failed: it could not keep the schedule or its CPU. */
const GENERATOR_CHECKS = new Set(['lag', 'rate', 'cpu']);

/** The `validity:` field that sets each generator check's limit, and what raising it costs. */
const LIMIT_FIELDS: Record<string, { field: string; cost: string }> = {
  lag: {
    field: 'validity.lagP99',
    cost: 'lateness up to that value is then accepted unchecked, whether or not it changed the outcome',
  },
  rate: {
    field: 'validity.rateTolerance',
    cost: 'an offered rate that far from the plan is then accepted, so the load measured is not quite the load declared',
  },
  cpu: {
    field: 'validity.generatorCpu',
    cost: 'a generator that close to a full core is then accepted, and its sends may bunch up without another check seeing it',
  },
};

/** A phase as the report's sentence says it ("at its highest, in the observation"). */
const PHASE_WORDS = {
  warmup: 'warm-up',
  baseline: 'baseline',
  trigger: 'trigger',
  observe: 'observation',
} as const;

/** The sample with the highest 1-minute load (the phases, then the start), and where it was taken. */
export function peakLoad(m: MachineState): { where: string; sample: MachineSample } {
  let best = { where: 'at the start', sample: m.start };
  for (const p of ['warmup', 'baseline', 'trigger', 'observe'] as const) {
    const s = m.phases[p];
    if (s && s.load1 > best.sample.load1) best = { where: `in the ${PHASE_WORDS[p]}`, sample: s };
  }
  return best;
}

/** Whether the load exceeded the cores anywhere in the run. */
function overloaded(m: MachineState): boolean {
  return peakLoad(m).sample.load1 > m.cores;
}

/** The other busy programs: those of the peak sample first (when the load was highest), then the most often seen; names only, at most 3. */
export function busyPrograms(m: MachineState): string[] {
  const seen = new Map<string, number>();
  for (const s of [
    m.start,
    ...(['warmup', 'baseline', 'trigger', 'observe'] as const).map((p) => m.phases[p]),
  ])
    for (const b of s?.busy ?? []) seen.set(b, (seen.get(b) ?? 0) + 1);
  const peak = peakLoad(m).sample.busy;
  const rest = [...seen.entries()]
    .filter(([n]) => !peak.includes(n))
    .sort((a, b) => b[1] - a[1])
    .map(([n]) => n);
  return [...new Set([...peak, ...rest])].slice(0, 3);
}

/** "load 3.4 (1-minute average) on 2 cores at its highest, in the trigger; steal 0%; busy: …", or that it was not recorded. */
export function describeMachineLoad(m: MachineState | null): string {
  if (!m) return 'machine load not recorded';
  const { where, sample } = peakLoad(m);
  const busy = busyPrograms(m);
  return (
    `load ${sample.load1} (1-minute average; 5-minute ${sample.load5}) on ${m.cores} core${m.cores === 1 ? '' : 's'} at its highest, ${where}` +
    (sample.stealPct !== null ? `; steal ${sample.stealPct}%` : '') +
    (busy.length > 0 ? `; busiest other programs: ${busy.join(', ')}` : '') +
    (sample.load1 > m.cores ? ' (more runnable work than cores)' : '')
  );
}

/**
 * The remedies that fit, in order. Generator failures (lag, rate, cpu): close the busy
 * programs named (when recorded and the load exceeded the cores), re-run, `--pin` (a local
 * run not pinned, on a machine with the cores to split), `--wait-for-quiet`, the
 * simulation's verdict for the same file, and last raising the limit with what it costs.
 * A baseline failure: the load against the hypothesis, the warm-up, the capacity. A trigger
 * failure: its error and `metabench lab reset`. An interrupted run: run it again.
 */
export function chooseRemedies(x: RemedyInput): Remedy[] {
  const out: Remedy[] = [];
  const add = (kind: RemedyKind, text: string): void => {
    if (!out.some((r) => r.kind === kind)) out.push({ kind, text });
  };
  const checks = new Set(x.failed.map((f) => f.check));
  const generator = [...checks].filter((c) => GENERATOR_CHECKS.has(c));
  const lab = x.runtime !== 'sim';
  const busy = x.machine && overloaded(x.machine) ? busyPrograms(x.machine) : [];

  if (x.interrupted) {
    add('rerun', `Run it again to the end of its schedule: \`${x.rerun}\`.`);
    if (lab)
      add(
        'lab-reset',
        'If it was forced (a second Ctrl-C), `metabench lab reset` undoes any fault or lab process left behind (the next metabench command does too).',
      );
    return out;
  }

  if (generator.length > 0 || checks.has('baseline')) {
    if (busy.length > 0)
      add(
        'close-busy',
        `Close the busy programs (${busy.join(', ')}): the machine had more runnable work than its ${x.machine!.cores} cores, and the load generator competed with them.`,
      );
  }
  if (generator.length > 0) {
    if (lab) add('rerun', `Re-run it: \`${x.rerun}\`.`);
    else
      add(
        'seed',
        `The simulation is deterministic: the same seed fails the same way. Another seed (\`--seed N\`) is another sample: \`${x.rerun}\`.`,
      );
    if (x.runtime === 'local' && x.pinned === false && x.cores >= 2)
      add(
        'pin',
        `Add \`--pin\`: the generator and the lab then run on disjoint CPUs of the ${x.cores}, so they do not compete for a core.`,
      );
    if (lab)
      add(
        'wait-for-quiet',
        'Add `--wait-for-quiet`: the run then waits for the machine to be quiet before it starts.',
      );
  }
  if (checks.has('baseline')) {
    if (lab) add('rerun', `Re-run it: \`${x.rerun}\`.`);
    add(
      'lower-load',
      'The load may be too high for the declared hypothesis: lower `load.rate`, or check the capacity it resolves against (`metabench calibrate FILE`, then `--capacity measured`).',
    );
    add(
      'warm-up',
      'The lab may not have been warm when the baseline began (a cold cache, a JIT, a connection pool filling): lengthen `schedule.warmup`.',
    );
  }
  if (checks.has('trigger')) {
    for (const e of x.triggerErrors) add('trigger-error', `The trigger's error: ${e}.`);
    if (lab)
      add('lab-reset', '`metabench lab reset` undoes any fault left applied, before running it again.');
    add('rerun', `Re-run it: \`${x.rerun}\`.`);
  }
  if (checks.has('recorded')) {
    add('rerun', `Re-run it: \`${x.rerun}\`.`);
  }
  if ((generator.length > 0 || checks.has('baseline')) && lab)
    add(
      'twin',
      x.twinVerdict !== null
        ? `The simulation of the same file (\`twin/\`) gives **${x.twinVerdict}**: a model's verdict, not this lab's measurement.`
        : "`--twin` adds the simulation's verdict for the same file (a model's verdict, not a measurement).",
    );
  if (generator.length > 0) {
    const raise = generator.map((c) => LIMIT_FIELDS[c]!);
    add(
      'raise-limit',
      `Last, raise the limit in the file's \`validity:\` section (${raise.map((r) => `\`${r.field}\``).join(', ')}); what that costs: ${raise.map((r) => r.cost).join('; ')}.`,
    );
  }
  if (checks.has('baseline'))
    add(
      'loosen-hypothesis',
      'Or loosen the hypothesis (`hypothesis:`); what that costs: the steady state the verdict rests on is checked less strictly.',
    );
  return out;
}

/** The remedies as a numbered list, under a line that says what they are. */
export function remedyLines(rs: readonly Remedy[]): string[] {
  if (rs.length === 0) return [];
  return ['What to do, in this order:', '', ...rs.map((r, i) => `${i + 1}. ${r.text}`)];
}
