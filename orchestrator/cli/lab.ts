import type { Command } from 'commander';
import { recoverOrphanedFaults } from '../trigger/journal.js';
import { registerDockerLab } from './labDocker.js';
import { registerManifests } from './labManifests.js';

export function register(program: Command): void {
  const lab = program.command('lab').description('manage the lab');
  lab
    .command('reset')
    .description('undo every fault left applied by an orchestrator that is no longer running')
    .action(() => {
      // The pre-action hook leaves `lab reset` alone (see main.ts): it says here what it undid.
      const undone = recoverOrphanedFaults();
      for (const line of undone) process.stdout.write(`lab reset: undid ${line}\n`);
      process.stdout.write(
        undone.length === 0
          ? 'lab reset: nothing to undo (no fault was left applied by an earlier run)\n'
          : `lab reset: undid ${undone.length} action${undone.length === 1 ? '' : 's'} left by an earlier run (faults, labs); nothing is left applied\n`,
      );
    });
  registerDockerLab(lab);
  registerManifests(lab);
}
