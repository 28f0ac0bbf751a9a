import { describeTrigger, triggerTarget } from './sections/schedule.js';
import { expectedOrigins } from './arrivals/index.js';
import { describeLoad } from './loadPlan.js';
import type { RunPlan } from './plan.js';
import { drainMs } from './originRules.js';
import { simulatedWallLine } from './simTime.js';

export { expectedOrigins } from './arrivals/index.js';
import { formatDuration } from '../../foundation/units.js';
import { scaleLimits, smallestAcceptedScale } from './scaleLimits.js';
import { timeConstants } from './timeConstants.js';

/** What `--dry-run` shows: the resolved plan of one run, and the whole experiment's length. */
export interface DryRun {
  readonly phases: readonly {
    readonly name: string;
    readonly startS: number;
    readonly endS: number;
    /** Expected origin requests offered in the phase; null for a closed loop. */
    readonly expectedOrigins: number | null;
  }[];
  readonly expectedOrigins: number | null;
  readonly trigger: readonly { readonly atS: number; readonly what: string }[];
  /** One run: the schedule plus the drain after it (the longest an origin can last). */
  readonly runS: number;
  readonly repeat: number;
  readonly totalS: number;
}

export function dryRun(plan: RunPlan, repeat: number): DryRun {
  const e = plan.experiment;
  const a = plan.load.arrival;
  const phases = (['warmup', 'baseline', 'trigger', 'observe'] as const).map((name) => {
    const s = plan.phases[name];
    const n = expectedOrigins(a, s);
    return {
      name,
      startS: s.startMs / 1000,
      endS: s.endMs / 1000,
      expectedOrigins: n === null ? null : Math.round(n),
    };
  });
  const total = expectedOrigins(a, { startMs: 0, endMs: plan.totalMs });
  const t = plan.phases.trigger;
  const deadlineMs = t.endMs + plan.recovery.within * (t.endMs - t.startMs);
  const c = e.client;
  // The run's own drain (originRules.ts), not an estimate of it.
  const runS = (plan.totalMs + drainMs(c)) / 1000;
  return {
    phases,
    expectedOrigins: total === null ? null : Math.round(total),
    trigger: [
      ...plan.triggers
        .flatMap((p) => [
          { atS: p.startMs / 1000, what: `apply ${describeTrigger(p.spec, plan.scale)}` },
          { atS: p.endMs / 1000, what: `undo ${p.spec.kind} on ${triggerTarget(p.spec)}` },
        ])
        .sort((x, y) => x.atS - y.atS),
      {
        atS: deadlineMs / 1000,
        what: `recovery deadline (${plan.recovery.within}x the trigger's duration)${deadlineMs > plan.totalMs ? ' — after the observation ends: the verdict will be unmeasured' : ''}`,
      },
      { atS: plan.totalMs / 1000, what: 'observation ends; in-flight origins drain' },
    ],
    runS,
    repeat,
    totalS: runS * repeat,
  };
}

/** Which capacity `% capacity` rates use, and where it came from. */
function capacityLines(plan: RunPlan): string[] {
  const c = plan.capacity;
  const f = (x: number | null): string => (x === null ? 'unknown' : `${+x.toFixed(3)}/s`);
  const usesPercent = JSON.stringify(plan.experiment.load).includes('capacityFraction');
  if (c.source === 'unknown') return [`  capacity: ${c.from}`];
  return [
    `  capacity: ${f(c.nominalPerS)} nominal${c.measuredPerS === null ? '' : `, ${f(c.measuredPerS)} measured`}; ${f(c.usedPerS)} used for % capacity${usesPercent ? '' : ' (no rate here is written as % capacity)'}`,
    `    from: ${c.from}`,
    ...(c.calibration ? [`    measured on: ${c.calibration.machine}`] : []),
    ...(c.calibration?.note ? [`    note: ${c.calibration.note}`] : []),
  ];
}

/** The dry run as text for a person. */
export function formatDryRun(
  plan: RunPlan,
  d: DryRun,
  /** The runtime by name, and whether it runs in virtual time (its capabilities): then the wall time is the simulator's. */
  runtime?: { readonly name: string; readonly virtualTime: boolean },
): string {
  const e = plan.experiment;
  const s = (x: number): string => formatDuration(x * 1000);
  const n = (x: number | null): string => (x === null ? 'closed loop: depends on the system' : `≈ ${x}`);
  const out = [
    `${e.name}: plan of run 1 of ${d.repeat} (seed ${plan.seed}, scale ${plan.scale}${runtime ? `, runtime ${runtime.name}` : ''})`,
    `  load: ${describeLoad(e.load)}; ${plan.load.meanPerS === null ? '' : `mean ${+plan.load.meanPerS.toFixed(3)}/s, `}peak ${plan.load.peakPerS === null ? '–' : `${+plan.load.peakPerS.toFixed(3)}/s`}`,
    ...capacityLines(plan),
    `  client: timeout ${formatDuration(e.client.timeout)}, retry ${e.client.retry.policy}${e.client.retry.policy === 'none' ? '' : ` up to ${e.client.retry.maxAttempts} attempts`}`,
    '  phases:',
    ...d.phases.map(
      (p) =>
        `    ${p.name.padEnd(9)} ${s(p.startS).padStart(8)} → ${s(p.endS).padEnd(8)} expected origin requests ${n(p.expectedOrigins)}`,
    ),
    `    total     expected origin requests ${n(d.expectedOrigins)}`,
    '  trigger timeline:',
    ...d.trigger.map((t) => `    ${s(t.atS).padStart(8)}  ${t.what}`),
    ...scaleLines(plan),
    runtime?.virtualTime
      ? simulatedWallLine(plan, d.repeat)
      : `  wall time: ≈ ${s(d.runS)} per run (schedule and drain, plus lab start-up) × ${d.repeat} = ≈ ${s(d.totalS)}`,
  ];
  return out.join('\n') + '\n';
}

/**
 * The time constants that do not scale beside the scaled durations bound by them
 * (DESIGN.md §2 "Scale"), and the smallest scale the experiment accepts.
 */
function scaleLines(plan: RunPlan): string[] {
  const ms = formatDuration;
  const limits = scaleLimits(plan);
  return [
    '  time constants (not scaled):',
    ...timeConstants(plan.experiment).map(
      (c) => `    ${c.name.padEnd(40)} ${ms(c.ms).padStart(8)}  ${c.from}`,
    ),
    `  scaled durations (× ${plan.scale}) and their limits:`,
    ...limits.map(
      (l) =>
        `    ${`${l.what} (${l.path.join('.')})`.padEnd(40)} ${ms(l.declaredMs * plan.scale).padStart(8)} ${l.declaredMs * plan.scale >= l.boundMs * (1 - 1e-9) ? '≥' : '< REFUSED:'} ${ms(l.boundMs)}, ${l.bound}`,
    ),
    `  smallest accepted scale: ${smallestAcceptedScale(plan)}`,
  ];
}
