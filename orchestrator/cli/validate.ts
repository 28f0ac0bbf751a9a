import type { Command } from 'commander';
import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { validateExperiment } from '../spec/load.js';
import { parseYamlFile, readSpecFile } from '../../foundation/yamlFile.js';
import type { Override } from '../../foundation/overrides.js';
import { isSweepData, loadSweep } from '../spec/sweep.js';
import { addSetOption } from './setOption.js';

export function register(program: Command): void {
  const cmd = program
    .command('validate')
    .description('check experiment and sweep files and report every problem with its file, line and field')
    .argument('<file...>', 'experiment or sweep files');
  addSetOption(cmd).action((files: string[], o: { set: Override[] }) => {
    const issues: SpecIssue[] = [];
    for (const f of files) {
      try {
        const y = parseYamlFile(readSpecFile(f), f);
        if (isSweepData(y.data)) {
          const s = loadSweep(y, o.set);
          process.stdout.write(`${f}: ok (a sweep of ${s.points.length} points)\n`);
        } else {
          validateExperiment(y, o.set);
          process.stdout.write(`${f}: ok\n`);
        }
      } catch (err) {
        if (err instanceof SpecError) issues.push(...err.issues);
        else throw err;
      }
    }
    if (issues.length) throw new SpecError(issues);
  });
}
