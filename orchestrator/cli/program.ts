import { Command } from 'commander';
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
import * as schemaCmd from './schema.js';
import * as sweepCmd from './sweep.js';
import * as validateCmd from './validate.js';

/**
 * The command line, every command registered (main.ts parses it; test/docs.test.ts reads
 * its options to check docs/commands.md names each one).
 */
export function buildProgram(): Command {
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
  return program;
}
