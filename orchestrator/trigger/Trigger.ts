import type { Lab, UndoRecipe } from '../lab/Lab.js';

/**
 * A timed fault. `apply` and `undo` act on the lab; `undoRecipe` says how to undo it
 * without the lab object, so the journal can undo it after a crash. `undo` is
 * idempotent and safe to call when `apply` failed halfway.
 */
export interface Trigger {
  readonly kind: string;
  readonly target: string;
  /**
   * The undo starts a process again (kill, stop): its cause is removed when the start is
   * issued, and the time until the process answers is reported on its own (DESIGN.md §2).
   */
  readonly restarts?: boolean;
  /**
   * The fault takes effect when `apply` is issued (a signal sent), though the call then
   * waits for the process to go: its start is the issue time, not the call's return.
   */
  readonly effectAtIssue?: boolean;
  describe(): string;
  undoRecipe(lab: Lab): UndoRecipe;
  apply(lab: Lab): Promise<void>;
  undo(lab: Lab): Promise<void>;
}
