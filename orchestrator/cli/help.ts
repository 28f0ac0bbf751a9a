import { Help, type Command, type Option } from 'commander';

// How run's and sweep's --help read: options in groups, one default each. Only commander
// here: program.ts loads this for every command.

/**
 * The help's option groups of run and sweep, in the order `--help` lists them; options in
 * none stay under commander's own "Options:" heading, listed first.
 */
export const HELP_GROUPS = {
  schedule: 'Load and schedule:',
  runtime: 'Runtime:',
  output: 'Output:',
  docker: 'Docker and swarm runtimes:',
} as const;
export type HelpGroup = keyof typeof HELP_GROUPS;

/** Where run's and sweep's options are listed; a new option adds its flag here (or calls inHelpGroup). */
const GROUP_OF: Readonly<Record<string, HelpGroup>> = {
  '--scale': 'schedule',
  '--any-scale': 'schedule',
  '--repeat': 'schedule',
  '--seed': 'schedule',
  '--set': 'schedule',
  '--capacity': 'schedule',
  '--runtime': 'runtime',
  '--pin': 'runtime',
  '--no-pin': 'runtime',
  '--twin': 'runtime',
  '--jobs': 'runtime',
  '--priority': 'runtime',
  '--wait-for-quiet': 'runtime',
  '--out': 'output',
  '--quiet': 'output',
  '--events': 'output',
  '--dry-run': 'output',
  '--fail-on': 'output',
  // A sweep's results folder, resumed (and its invalid runs re-run) in place.
  '--resume': 'output',
  '--rerun-invalid': 'output',
  '--max-reruns': 'output',
  '--project': 'docker',
  '--env-file': 'docker',
  '--metrics-port': 'docker',
  '--no-metrics': 'docker',
  '--grafana-url': 'docker',
};

/**
 * Puts the named options (all of GROUP_OF's when none are named) in their help groups and
 * orders the command's options so each group is listed once, in HELP_GROUPS' order.
 * Call it after the options are added; calling it again with a new option is fine.
 */
export function inHelpGroup(cmd: Command, group?: HelpGroup, ...flags: string[]): Command {
  for (const o of cmd.options) {
    const g =
      group !== undefined ? (flags.includes(o.long ?? '') ? group : undefined) : GROUP_OF[o.long ?? ''];
    if (g !== undefined) o.helpGroup(HELP_GROUPS[g]);
  }
  const order: string[] = Object.values(HELP_GROUPS);
  const rank = (o: Option) => order.indexOf(o.helpGroupHeading ?? '') + 1; // ungrouped first
  // commander lists groups in the order their first option appears; a stable sort keeps
  // each group's options in the order they were added.
  (cmd.options as Option[]).sort((a, b) => rank(a) - rank(b));
  return cmd;
}

/**
 * An option's help line with one default: commander's "(default: …)" is left out when the
 * description already says its default in words, and for an empty list (a repeatable
 * option such as --set, whose default [] says nothing).
 */
export function optionDescription(this: Help, option: Option): string {
  const ownDefault = /\(default\b|\bdefault:/.test(option.description);
  const emptyList = Array.isArray(option.defaultValue) && option.defaultValue.length === 0;
  if (!ownDefault && !emptyList) return Help.prototype.optionDescription.call(this, option);
  const withoutDefault = Object.create(option, { defaultValue: { value: undefined } }) as Option;
  return Help.prototype.optionDescription.call(this, withoutDefault);
}
