#!/usr/bin/env node
import { Command, CommanderError } from 'commander';
import { isBenchError, SpecError } from '../../foundation/errors.js';
import { ExitCode } from '../../foundation/exitCodes.js';
import { metabenchVersion } from '../results/manifest.js';
import { orphanedJournals, recoverOrphanedFaults } from '../trigger/journal.js';

// The runtimes (local, docker, swarm, sim) are plugins, registered before a command that
// needs one runs (and before an orphaned fault is undone: its recipe may be a runtime's).
// Imported then, not up front: their labs, clients and the simulator take most of a second
// to load, which `--help`, `validate`, `report` and the other commands without a lab paid.
const WITHOUT_RUNTIME = new Set([
  'validate',
  'schema',
  'report',
  'compare',
  'export',
  'faultproxy',
  'llm-stub',
]);
async function registerRuntimesFor(action: Command): Promise<void> {
  let top = action;
  while (top.parent?.parent) top = top.parent;
  if (WITHOUT_RUNTIME.has(top.name()) && !orphanedJournals()) return;
  const { registerRuntimes } = await import('./runtimes.js');
  registerRuntimes();
}

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
  .hook('preAction', async (_program, action) => {
    await registerRuntimesFor(action);
    // A crashed orchestrator may have left a fault applied (a paused process): undo it first.
    // `lab reset` does that itself and reports each one.
    if (action.name() === 'reset' && action.parent?.name() === 'lab') return;
    for (const line of recoverOrphanedFaults())
      process.stderr.write(`metabench: undid a fault left by an earlier run: ${line}\n`);
  });

// Each command's module, in the order `--help` lists them. Only the one named on the command
// line is imported (with its options, help and action); all of them for the top-level help,
// a mistyped name's suggestion or `help`. A command's module loads what its action needs,
// which for most commands is far more than `validate` or `report` use.
const COMMANDS: Record<string, () => Promise<{ register(program: Command): void }>> = {
  run: () => import('./run.js'),
  sweep: () => import('./sweep.js'),
  calibrate: () => import('./calibrate.js'),
  load: () => import('./load.js'),
  report: () => import('./report.js'),
  compare: () => import('./compare.js'),
  model: () => import('./model.js'),
  validate: () => import('./validate.js'),
  schema: () => import('./schema.js'),
  lab: () => import('./lab.js'),
  faultproxy: () => import('./faultproxy.js'),
  'llm-stub': () => import('./llmStub.js'),
  export: () => import('./export.js'),
};
const named = process.argv[2];
const wanted = named !== undefined && Object.hasOwn(COMMANDS, named) ? [named] : Object.keys(COMMANDS);
for (const cmd of await Promise.all(wanted.map((n) => COMMANDS[n]!()))) cmd.register(program);
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
