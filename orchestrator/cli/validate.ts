import type { Command } from 'commander';
import { SpecError, type SpecIssue } from '../errors.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../spec/overrides.js';
import { addSetOption } from './setOption.js';

export function register(program: Command): void {
  const cmd = program
    .command('validate')
    .description('check experiment files and report every problem with its file, line and field')
    .argument('<file...>', 'experiment files');
  addSetOption(cmd).action((files: string[], o: { set: Override[] }) => {
    const issues: SpecIssue[] = [];
    for (const f of files) {
      try {
        loadExperimentFile(f, o.set);
        process.stdout.write(`${f}: ok\n`);
      } catch (err) {
        if (err instanceof SpecError) issues.push(...err.issues);
        else throw err;
      }
    }
    if (issues.length) throw new SpecError(issues);
  });
}
