import { z } from 'zod';
import { defineTrigger, timing } from '../kind.js';
import { runCommand } from '../shellCommand.js';

/**
 * The user's own fault: a shell command that applies it and one that undoes it, for a
 * system metabench did not write (a control endpoint, a signal, a config reload). The undo
 * is journaled as a `shell` recipe before `apply` runs, so an interrupted run (SIGKILL
 * included) is undone by the next metabench command, as every fault is. Both run with
 * `sh -c` in the directory metabench was started in.
 */
const commandText = z.string().regex(/\S/, 'give a shell command').max(4000);

export const command = defineTrigger({
  kind: 'command',
  schema: z.strictObject({ kind: z.literal('command'), apply: commandText, undo: commandText, ...timing }),
  summary:
    'Runs your `apply` shell command, then your `undo` one when the trigger ends (journaled: an interrupted run is undone by the next command).',
  acts: 'host',
  target: () => 'command',
  targetField: 'apply',
  describe: (t, d) => `command \`${t.apply}\` for ${d}, undone by \`${t.undo}\``,
  create: (t) => {
    // Where the commands run, fixed now, so a recovery after a crash runs the undo in the same place.
    const cwd = process.cwd();
    return {
      kind: 'command',
      target: 'command',
      describe: () => `command \`${t.apply}\``,
      undoRecipe: () => ({ kind: 'shell', command: t.undo, cwd, what: `command \`${t.apply}\`` }),
      apply: () => runCommand(t.apply, cwd),
      undo: () => runCommand(t.undo, cwd),
    };
  },
});
