import { Command } from 'commander';
import { metabenchVersion } from '../results/manifest.js';
import { optionDescription } from './help.js';
import type { Runtime } from '../lab/runtimes.js';

/**
 * Each command's module, in the order `--help` lists them. A command's module loads what its
 * action needs, which for most commands is far more than `validate` or `report` use; main.ts
 * imports only the one named on the command line.
 */
export const COMMANDS: Readonly<Record<string, () => Promise<{ register(program: Command): void }>>> = {
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
  ls: () => import('./ls.js'),
};

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
  'ls',
]);

async function registerRuntimesFor(action: Command, orphanedJournals: () => boolean): Promise<void> {
  let top = action;
  while (top.parent?.parent) top = top.parent;
  if (WITHOUT_RUNTIME.has(top.name()) && !orphanedJournals()) return;
  // `run` and `sweep` with --runtime use that runtime alone (and the simulation for a twin):
  // only it is loaded, unless an orphaned fault's recipe may need another.
  if (
    NAMES_ITS_RUNTIME.has(top.name()) &&
    top === action &&
    action.getOptionValueSource('runtime') === 'cli'
  ) {
    const o = action.opts<{ runtime: Runtime; twin?: boolean }>();
    if (!orphanedJournals()) {
      const { registerNamedRuntimes } = await import('./namedRuntimes.js');
      return registerNamedRuntimes(o.twin ? [o.runtime, 'sim'] : [o.runtime]);
    }
  }
  const { registerRuntimes } = await import('./runtimes.js');
  registerRuntimes();
}

/** The commands whose --runtime is the only runtime they use (a sweep file's own runtime is said by --runtime or not at all). */
const NAMES_ITS_RUNTIME = new Set(['run', 'sweep']);

/**
 * The command line with the named commands registered (all of them by default: the
 * top-level help, a mistyped name's suggestion; test/docs.test.ts reads their options to
 * check docs/commands.md names each one).
 */
export async function buildProgram(names: readonly string[] = Object.keys(COMMANDS)): Promise<Command> {
  const program = new Command();
  program
    .name('metabench')
    .description('A laboratory for reproducing and studying metastable failures.')
    .version(metabenchVersion())
    .exitOverride()
    .showSuggestionAfterError()
    // One default per option (options.ts); subcommands inherit this.
    .configureHelp({ optionDescription })
    .hook('preAction', async (_program, action) => {
      // The fault journal (and the trigger kinds its recipes name) loads when a command runs,
      // not for --version or --help.
      const { orphanedJournals, recoverOrphanedFaults } = await import('../trigger/journal.js');
      await registerRuntimesFor(action, orphanedJournals);
      // A crashed orchestrator may have left a fault applied (a paused process): undo it first.
      // `lab reset` does that itself and reports each one.
      if (action.name() === 'reset' && action.parent?.name() === 'lab') return;
      for (const line of recoverOrphanedFaults())
        process.stderr.write(`metabench: undid a fault left by an earlier run: ${line}\n`);
    });
  for (const cmd of await Promise.all(names.map((n) => COMMANDS[n]!()))) cmd.register(program);
  return program;
}
