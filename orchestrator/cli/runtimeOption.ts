import { InvalidArgumentError, type Command } from 'commander';
import { RUNTIMES, type Runtime } from '../lab/runtimes.js';

/** `--runtime local|sim`, shared by run and sweep (a sweep file's `runtime:` is the sweep's default). */
export function addRuntimeOption(cmd: Command, what: string): Command {
  return cmd.option(`--runtime <${RUNTIMES.join('|')}>`, what, parseRuntime);
}

export function parseRuntime(v: string): Runtime {
  if (!(RUNTIMES as readonly string[]).includes(v))
    throw new InvalidArgumentError(`--runtime takes one of ${RUNTIMES.join(', ')} (got "${v}")`);
  return v as Runtime;
}
