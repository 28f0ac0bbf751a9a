import type { Command } from 'commander';
import { recoverOrphanedFaults } from '../trigger/journal.js';
import { registerDockerLab } from './labDocker.js';

export function register(program: Command): void {
  const lab = program.command('lab').description('manage the lab');
  lab
    .command('reset')
    .description('undo every fault left applied by an orchestrator that is no longer running')
    .action(() => {
      // The pre-action hook has already undone orphaned faults; say so when there were none.
      const more = recoverOrphanedFaults();
      for (const line of more) process.stdout.write(`undid: ${line}\n`);
      process.stdout.write('lab reset: no fault left applied\n');
    });
  registerDockerLab(lab);
}
