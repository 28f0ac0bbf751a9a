#!/usr/bin/env node
import { CommanderError } from 'commander';
import { isBenchError, SpecError } from '../../foundation/errors.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { buildProgram, COMMANDS } from './program.js';
import { staleBuildWarning } from './staleBuild.js';

// A reader that leaves (`| head`, a closed terminal, a dead parent) must not crash a run
// mid-pause: that would leave the paused api stopped and lose what was measured. What
// is written after it left is dropped; the run goes on to its end.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });

// From a source checkout: sources changed since dist/ was built are said, never built here.
// Said to a person at a terminal: finding out stats every source (a tenth of a second,
// a sixth of a simulated run's whole process), which a script or a test need not pay.
if (process.stderr.isTTY) {
  const stale = await staleBuildWarning();
  if (stale) process.stderr.write(stale);
}

// Only the command named on the command line is imported (with its options, help and
// action); none for --version; all of them for the top-level help, a mistyped name's
// suggestion or `help`.
const named = process.argv[2];
const program = await buildProgram(
  named === '--version' || named === '-V'
    ? []
    : named !== undefined && Object.hasOwn(COMMANDS, named)
      ? [named]
      : undefined,
);
const argv = process.argv.includes('faultproxy')
  ? (await import('./faultproxy.js')).rewriteArgv(process.argv)
  : process.argv;

try {
  await program.parseAsync(argv);
} catch (err) {
  process.exitCode = report(err);
}

/** Prints an error for a person (no stack trace unless METABENCH_DEBUG is set) and returns the exit code. */
function report(err: unknown): number {
  if (err instanceof CommanderError) {
    if (
      err.code === 'commander.helpDisplayed' ||
      err.code === 'commander.version' ||
      err.code === 'commander.help'
    )
      return ExitCode.ok;
    return ExitCode.usage; // commander has already printed the message
  }
  if (isBenchError(err)) {
    if (err instanceof SpecError)
      process.stderr.write(
        `${err.message}\n${err.issues.length} problem${err.issues.length > 1 ? 's' : ''} found\n`,
      );
    else process.stderr.write(`metabench: ${err.message}\n`);
    if (err.hint) process.stderr.write(`hint: ${err.hint}\n`);
    return err.exitCode;
  }
  process.stderr.write(`metabench: internal error: ${(err as Error)?.message ?? String(err)}\n`);
  if (process.env.METABENCH_DEBUG) process.stderr.write(`${(err as Error)?.stack ?? ''}\n`);
  return ExitCode.internal;
}
