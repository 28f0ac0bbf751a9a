import type { Command } from 'commander';
import { SpecError, type SpecIssue } from '../../foundation/errors.js';
import { validateExperiment } from '../spec/load.js';
import { parseYamlFile, readSpecFile } from '../../foundation/yamlFile.js';
import type { Override } from '../../foundation/overrides.js';
import { isSweepData, loadSweep } from '../spec/sweep.js';
import { planRun } from '../spec/plan.js';
import { scaleIssues } from '../spec/refuseScale.js';
import { positiveNumber } from './options.js';
import { addSetOption } from './setOption.js';

export function register(program: Command): void {
  const cmd = program
    .command('validate')
    .description('check experiment and sweep files and report every problem with its file, line and field')
    .argument('<file...>', 'experiment or sweep files')
    .option(
      '--scale <F>',
      "check the file at this scale too: every scaled duration against the constants that do not scale, and the recovery criterion against its noise floor (default 1; the nominal capacity's rates)",
      positiveNumber('--scale'),
      1,
    );
  addSetOption(cmd).action((files: string[], o: { set: Override[]; scale: number }) => {
    const issues: SpecIssue[] = [];
    for (const f of files) {
      try {
        const y = parseYamlFile(readSpecFile(f), f);
        if (isSweepData(y.data)) {
          const s = loadSweep(y, o.set);
          const found = s.points.flatMap((p) =>
            scaleIssues(
              planRun(s.experiments[p.index - 1]!, { scale: o.scale, run: 1, sourceFile: s.experimentFile }),
              s.experimentFile,
            ).map((i) => ({ ...i, message: `point ${p.index}: ${i.message}` })),
          );
          if (found.length) issues.push(...found);
          else process.stdout.write(`${f}: ok (a sweep of ${s.points.length} points)\n`);
        } else {
          const e = validateExperiment(y, o.set);
          const plan = planRun(e, { scale: o.scale, run: 1, sourceFile: f });
          const found = scaleIssues(plan, f);
          if (found.length) issues.push(...found);
          else process.stdout.write(`${f}: ok\n`);
        }
      } catch (err) {
        if (err instanceof SpecError) issues.push(...err.issues);
        else throw err;
      }
    }
    if (issues.length) throw new SpecError(issues);
  });
}
