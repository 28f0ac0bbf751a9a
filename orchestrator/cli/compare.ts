import { basename, dirname, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { writeComparison } from '../report/compare.js';

export function register(program: Command): void {
  program
    .command('compare')
    .description('write a side-by-side report of two results folders')
    .argument('<dirA>', 'a results folder')
    .argument('<dirB>', 'another results folder')
    .option('--out <DIR>', 'write the comparison here (default: compare-<A>-vs-<B> beside A)')
    .action(async (a: string, b: string, o: { out?: string }) => {
      const out =
        o.out ?? join(dirname(resolve(a)), `compare-${basename(resolve(a))}-vs-${basename(resolve(b))}`);
      await writeComparison(a, b, out);
      process.stdout.write(`${out}\n`);
    });
}
