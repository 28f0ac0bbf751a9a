import { InvalidArgumentError, type Command } from 'commander';
import { parseSet, type Override } from '../../foundation/overrides.js';

/**
 * `--set path=value`, repeatable, shared by every command that reads an experiment
 * (run, sweep, validate, model and calibrate). Each override is validated with the file.
 */
export function addSetOption(cmd: Command): Command {
  return cmd.option(
    '--set <path=value>',
    'override a field of the file by its dotted path, e.g. --set load.rate=40/s (repeatable)',
    collectSet,
    [] as Override[],
  );
}

export function collectSet(text: string, previous: Override[] = []): Override[] {
  const r = parseSet(text);
  if (!r.ok) throw new InvalidArgumentError(r.message);
  return [...previous, r.value];
}

/** How overrides are recorded in manifest.json: the command-line text of each. */
export function describeOverrides(overrides: readonly Override[]): string[] {
  return overrides.map((o) => o.source.replace(/^--set /, ''));
}
