import type { PlannedTrigger, RunPlan } from '../spec/plan.js';
import { triggerTarget } from '../spec/sections/schedule.js';
import type { TriggerOutcome } from './validity.js';

/** A trigger as it actually happened (times from the run's clock). */
export interface TriggerRecord {
  readonly kind: string;
  readonly target: string;
  readonly startMs: number;
  /** When its cause was removed (DESIGN.md §2): not when a restarted process became healthy. */
  readonly endMs: number;
  readonly describe?: string;
  readonly plannedStartMs?: number;
  /** A restart's time from its start to its health check passing, ms. */
  readonly restartHealthyMs?: number;
  /** Why applying it failed (it was undone anyway). */
  readonly error?: string;
  readonly undoError?: string;
}

/**
 * The trigger window the recovery is measured from: the first actual start to the last
 * actual end; the planned window when no trigger was applied (an interrupted run).
 */
export function triggerWindow(plan: RunPlan, applied: readonly TriggerRecord[]): TriggerRecord {
  const specs =
    applied.length > 0
      ? applied
      : plan.triggers.map((t) => ({ ...t, kind: t.spec.kind, target: triggerTarget(t.spec) }));
  const join = (xs: string[]): string => [...new Set(xs)].join('+');
  return {
    kind: join(specs.map((t) => t.kind)),
    target: join(specs.map((t) => t.target)),
    startMs: applied.length > 0 ? Math.min(...applied.map((t) => t.startMs)) : plan.phases.trigger.startMs,
    endMs: applied.length > 0 ? Math.max(...applied.map((t) => t.endMs)) : plan.phases.trigger.endMs,
  };
}

/** A planned trigger and its record (in schedule order), when the caller has no TriggerSchedule. */
export function asTriggerOutcome(p: PlannedTrigger, t: TriggerRecord | undefined): TriggerOutcome {
  return {
    describe: t?.describe ?? `${p.spec.kind} ${triggerTarget(p.spec)}`,
    plannedStartMs: t?.plannedStartMs ?? p.startMs,
    startMs: t?.startMs ?? null,
    applyError: t?.error,
    undoError: t?.undoError,
    undone: t !== undefined,
  };
}
