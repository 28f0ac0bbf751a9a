import { InvalidArgumentError, type Command } from 'commander';
import { CAPACITY_MODES, parseCapacityMode } from '../calibrate/capacity.js';
import { parseRuntime, RUNTIMES } from '../lab/runtimes.js';

export function positiveNumber(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} takes a number greater than 0 (got "${v}")`);
    return n;
  };
}

export function wholeNumber(flag: string, min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`${flag} takes a whole number from ${min} to ${max} (got "${v}")`);
    return n;
  };
}

/** `--runtime <name>` (run, sweep, calibrate): where the lab runs; validated, recorded in manifest.json. */
export function addRuntimeOption(cmd: Command, what = 'the lab'): Command {
  return cmd.option(
    `--runtime <name>`,
    `where ${what} runs: ${RUNTIMES.join(' | ')} (default: local)`,
    parseRuntime,
  );
}

/** `--capacity auto|nominal|measured` (run, sweep): which capacity `% capacity` rates resolve against. */
export function addCapacityOption(cmd: Command): Command {
  return cmd.option(
    '--capacity <source>',
    `which capacity "% capacity" rates use: ${CAPACITY_MODES.join(' | ')} (default auto: the one metabench calibrate measured for this lab on this machine, else the nominal one)`,
    parseCapacityMode,
  );
}
