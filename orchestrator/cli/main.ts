#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { isBenchError, SpecError } from '../../foundation/errors.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { metabenchVersion } from '../results/manifest.js';
import { recoverOrphanedFaults } from '../trigger/journal.js';
import * as calibrateCmd from './calibrate.js';
import * as compareCmd from './compare.js';
import * as exportCmd from './export.js';
import * as faultproxyCmd from './faultproxy.js';
import * as labCmd from './lab.js';
import * as llmStubCmd from './llmStub.js';
import * as loadCmd from './load.js';
import * as modelCmd from './model.js';
import * as reportCmd from './report.js';
import * as runCmd from './run.js';
import { registerRuntimes } from './runtimes.js';
import * as schemaCmd from './schema.js';
import * as sweepCmd from './sweep.js';
import * as validateCmd from './validate.js';

// The runtimes (local, docker, sim) are plugins: registered here, before any command runs.
registerRuntimes();

// A reader that leaves (`| head`, a closed terminal, a dead parent) must not crash a run
// mid-pause: that would leave the paused api stopped and lose what was measured. What
// is written after it left is dropped; the run goes on to its end.
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
  });

const program = new Command();
program
  .name('metabench')
  .description('A laboratory for reproducing and studying metastable failures.')
  .version(metabenchVersion())
  .exitOverride()
  .showSuggestionAfterError()
  .hook('preAction', (_program, action) => {
    // A crashed orchestrator may have left a fault applied (a paused process): undo it first.
    // `lab reset` does that itself and reports each one.
    if (action.name() === 'reset' && action.parent?.name() === 'lab') return;
    for (const line of recoverOrphanedFaults())
      process.stderr.write(`metabench: undid a fault left by an earlier run: ${line}\n`);
  });

for (const cmd of [
  runCmd,
  sweepCmd,
  calibrateCmd,
  loadCmd,
  reportCmd,
  compareCmd,
  modelCmd,
  validateCmd,
  schemaCmd,
  labCmd,
  faultproxyCmd,
  llmStubCmd,
  exportCmd,
])
  cmd.register(program);

try {
  await program.parseAsync(faultproxyCmd.rewriteArgv(process.argv));
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
