import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { formatIndex, INDEX_FILE, readIndex } from '../results/runIndex.js';

export function register(program: Command): void {
  program
    .command('ls')
    .description(
      'list the runs and sweeps in a results folder (its index: date, file, runtime, scale, outcome, validity, folder)',
    )
    .argument('[dir]', 'the results folder', 'results')
    .action((dir: string) => {
      const entries = readIndex(dir);
      if (entries === null || entries.length === 0) {
        // Nothing to list is not an error, but it is said plainly (and why it may be so).
        process.stderr.write(
          existsSync(dir)
            ? `${join(dir, INDEX_FILE)}: no index yet: no run or sweep has ended in ${dir} since results were indexed (folders made with --out elsewhere are not indexed)\n`
            : `${dir}: no such folder: no run or sweep has written results there\n`,
        );
        return;
      }
      process.stdout.write(formatIndex(entries));
    });
}
