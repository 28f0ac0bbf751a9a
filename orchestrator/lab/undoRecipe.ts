import type { ComposeDownUndo, DockerUndo, ForwardedHttpUndo } from './dockerData.js';

/** How to undo an action without the Lab object that applied it (after a crash). */
export type UndoRecipe =
  | {
      readonly kind: 'signal';
      readonly pid: number;
      /** The process's start time in clock ticks (/proc/PID/stat field 22), so a reused pid is never signalled. */
      readonly startTicks: number | null;
      readonly signal: NodeJS.Signals;
      readonly what: string;
    }
  | { readonly kind: 'none'; readonly what: string }
  | {
      /** One signal to every process of a tree (a paused Postgres: the postmaster and its backends). */
      readonly kind: 'signals';
      readonly targets: readonly { readonly pid: number; readonly startTicks: number | null }[];
      readonly signal: NodeJS.Signals;
      readonly what: string;
    }
  | {
      /** Several undos in order (the teardown of a whole lab after a crash). */
      readonly kind: 'steps';
      readonly steps: readonly UndoRecipe[];
      readonly what: string;
    }
  | {
      /** Removes a directory the lab made (a Postgres data directory under the temp dir). */
      readonly kind: 'remove';
      readonly path: string;
      readonly what: string;
    }
  | {
      /** One request to a fault proxy's API (Toxiproxy or ours): remove a toxic, re-enable a link. */
      readonly kind: 'http';
      readonly method: 'DELETE' | 'POST';
      readonly url: string;
      readonly body?: Record<string, unknown>;
      readonly what: string;
    }
  | {
      /** The user's shell command that undoes their own fault (trigger kind `command`), run by `sh -c` in `cwd`. */
      readonly kind: 'shell';
      readonly command: string;
      readonly cwd: string;
      readonly what: string;
    }
  /** One Docker Engine API call (unpause, start) on a container of the docker runtime. */
  | DockerUndo
  /** A compose project removed through the Engine API (your own compose file, after a crash). */
  | ComposeDownUndo
  /** An HTTP undo to a swarm stack's unpublished fault proxy, through the engine. */
  | ForwardedHttpUndo;
