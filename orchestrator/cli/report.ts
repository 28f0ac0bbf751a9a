import type { Command } from 'commander';
import { writeReport } from '../report/writeReport.js';

export function register(program: Command): void {
  program
    .command('report')
    .description(
      're-render report.md, report.html, figures/ and data/ of a results folder from its files alone',
    )
    .argument('<results-dir>', 'a folder `metabench run`, `sweep` or `calibrate` wrote')
    .action(async (dir: string) => {
      const files = await writeReport(dir);
      process.stderr.write(`metabench: wrote ${files.length} files in ${dir}\n`);
      process.stdout.write(`${dir}\n`);
    });
}
