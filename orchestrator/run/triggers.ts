import type { Clock } from '../../foundation/clock.js';
import type { Recorder } from '../../bench/record/Recorder.js';
import type { TriggerRecord } from '../analysis/summary.js';
import type { Lab } from '../lab/Lab.js';
import type { TriggerOutcome } from '../analysis/validity.js';
import type { PlannedTrigger } from '../spec/plan.js';
import type { Journal } from '../trigger/journal.js';
import { createTrigger } from '../trigger/registry.js';
import type { Trigger } from '../trigger/Trigger.js';
import { round } from '../../foundation/round.js';

interface Slot {
  readonly trigger: Trigger;
  readonly planned: PlannedTrigger;
  readonly id: string;
  /** Resolves to true once apply has run (even if it failed halfway: undo anyway). */
  applied: Promise<boolean> | undefined;
  startMs: number | null;
  /** When its cause was removed (SIGCONT sent, the start issued, the toxic deleted). */
  endMs: number | null;
  /** A restart's: when the restarted process answered its health check. */
  healthyMs?: number;
  error?: string;
  undoError?: string;
}

/**
 * The run's triggers on its clock: each is journaled (fsynced) before it is applied,
 * undone at its end, and undone on every exit path (`undoAll`, last applied first).
 * Apply and undo times go to events.ndjson and, exactly, into summary.json.
 */
export class TriggerSchedule {
  private readonly slots: Slot[];

  constructor(
    planned: readonly PlannedTrigger[],
    run: number,
    private readonly lab: Lab,
    private readonly journal: Pick<Journal, 'record' | 'clear'>,
    private readonly say: (line: string) => void,
  ) {
    this.slots = planned.map((p, i) => {
      const trigger = createTrigger(p.spec, i);
      return {
        trigger,
        planned: p,
        id: `run-${run}-${i}-${trigger.kind}-${trigger.target}`,
        applied: undefined,
        startMs: null,
        endMs: null,
      };
    });
  }

  /** Sets the timers; returns their cancels. `stopped` says the run is being interrupted. */
  arm(clock: Clock, recorder: Recorder, stopped: () => boolean): (() => void)[] {
    const cancels: (() => void)[] = [];
    for (const s of this.slots) {
      cancels.push(
        clock.timer(s.planned.startMs, () => {
          if (!stopped()) this.apply(s, clock, recorder);
        }),
      );
      cancels.push(clock.timer(s.planned.endMs, () => void this.undo(s, () => clock.now(), recorder)));
    }
    return cancels;
  }

  private apply(s: Slot, clock: Clock, rec: Recorder): void {
    this.journal.record({
      id: s.id,
      appliedAt: new Date().toISOString(),
      undo: s.trigger.undoRecipe(this.lab),
    });
    const issued = clock.now();
    s.applied = s.trigger.apply(this.lab).then(
      () => {
        const t = s.trigger.effectAtIssue ? issued : clock.now();
        s.startMs = t;
        rec.note({
          e: 'trigger',
          action: 'apply',
          kind: s.trigger.kind,
          target: s.trigger.target,
          atMs: round(t, 3),
        });
        this.say(`  ${s.trigger.describe()} applied at ${(t / 1000).toFixed(3)} s`);
        return true;
      },
      (err: Error) => {
        s.error = err.message;
        s.startMs = clock.now();
        this.say(`  ${s.trigger.describe()} failed: ${err.message}`);
        rec.note({
          e: 'trigger',
          action: 'failed',
          kind: s.trigger.kind,
          target: s.trigger.target,
          atMs: round(clock.now(), 3),
          error: err.message,
        });
        return true; // it may have half-applied: undo anyway
      },
    );
  }

  private async undo(s: Slot, now: () => number, rec: Recorder | undefined): Promise<void> {
    if (!s.applied) return;
    const wasApplied = await s.applied;
    s.applied = undefined;
    if (!wasApplied) return;
    // A restart's cause is removed when the start is issued; the wait for health is its own figure.
    const issued = now();
    try {
      await s.trigger.undo(this.lab);
    } catch (err) {
      // Left in the journal: `metabench lab reset` (or the next command) undoes it.
      s.undoError = (err as Error).message;
      this.say(`  ${s.trigger.describe()}: undo failed: ${(err as Error).message}`);
      throw err;
    }
    this.journal.clear(s.id);
    const done = now();
    const t = s.trigger.restarts ? issued : done;
    s.endMs = t;
    if (s.trigger.restarts) s.healthyMs = done;
    rec?.note({
      e: 'trigger',
      action: 'undo',
      kind: s.trigger.kind,
      target: s.trigger.target,
      atMs: round(t, 3),
    });
    this.say(`  ${s.trigger.describe()} undone at ${(t / 1000).toFixed(3)} s`);
    if (s.trigger.restarts) this.say(`  restart took ${((done - t) / 1000).toFixed(3)} s to become healthy`);
  }

  /** Undoes whatever is still applied, the last applied first; every undo is tried. */
  async undoAll(now: () => number, rec: Recorder | undefined): Promise<void> {
    let first: unknown;
    for (const s of [...this.slots].reverse())
      await this.undo(s, now, rec).catch((err: unknown) => (first ??= err));
    if (first !== undefined) throw first;
  }

  /** The triggers as they happened (those that were applied), with exact times. */
  records(plannedEndFallback: boolean): TriggerRecord[] {
    return this.slots
      .filter((s) => s.startMs !== null)
      .map((s) => ({
        kind: s.trigger.kind,
        target: s.trigger.target,
        describe: s.trigger.describe(),
        plannedStartMs: s.planned.startMs,
        startMs: s.startMs!,
        endMs: s.endMs ?? (plannedEndFallback ? s.planned.endMs : s.startMs!),
        undone: s.endMs !== null,
        ...(s.healthyMs !== undefined ? { restartHealthyMs: s.healthyMs - s.endMs! } : {}),
        ...(s.error ? { error: s.error } : {}),
        ...(s.undoError ? { undoError: s.undoError } : {}),
      }));
  }

  /** Every planned trigger, as planned and as it happened (for run validity). */
  outcomes(): TriggerOutcome[] {
    return this.slots.map((s) => ({
      describe: s.trigger.describe(),
      plannedStartMs: s.planned.startMs,
      startMs: s.startMs,
      applyError: s.error,
      undoError: s.undoError,
      undone: s.endMs !== null,
    }));
  }
}
