import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { resultsDir } from '../results/files.js';
import { loadExperimentFile } from '../spec/load.js';
import type { Override } from '../spec/overrides.js';
import { planRun } from '../spec/plan.js';
import { parseDuration, parseRate } from '../spec/units.js';
import { nominalCapacityPerS } from '../spec/plan.js';
import { simulatedMap, mapTable } from '../../sim/model/map.js';
import { describePrediction, predict } from '../../sim/model/predict.js';
import { writeModel } from '../../sim/model/report.js';
import { positiveNumber } from './options.js';
import { addSetOption, describeOverrides } from './setOption.js';

function list<T>(flag: string, parse: (s: string) => T | undefined) {
  return (v: string): T[] =>
    v.split(',').map((s) => {
      const x = parse(s.trim());
      if (x === undefined) throw new InvalidArgumentError(`${flag}: cannot read "${s}"`);
      return x;
    });
}

export function register(program: Command): void {
  const cmd = program
    .command('model')
    .description(
      "the experiment's queueing model: the fluid prediction of its bistable range, and a simulated map of the metastable region over offered load × trigger duration",
    )
    .argument('<file>', 'experiment file (YAML)')
    .option('--scale <F>', 'the schedule scale of the simulated runs', positiveNumber('--scale'), 1)
    .option(
      '--rates <LIST>',
      'offered loads of the map, e.g. 50/s,100/s or 20%,50% (of capacity); default: 7 from 10% to 90% of capacity',
      list('--rates', (s) => s),
    )
    .option(
      '--durations <LIST>',
      "trigger durations of the map as the file would write them, e.g. 500ms,1s,5s; default: 10%, 25%, 50% and 100% of the file's",
      list('--durations', (s) => {
        const r = parseDuration(s);
        return r.ok ? r.value : undefined;
      }),
    )
    .option('--no-map', 'only the fluid prediction (no simulation)')
    .option(
      '--out <DIR>',
      'write model.md, model.json, map.csv and figures/ here (default: results/<date>-<name>-model)',
    )
    .option('--quiet', 'no progress lines');
  addSetOption(cmd).action(
    async (
      file: string,
      o: {
        scale: number;
        rates?: string[];
        durations?: number[];
        map: boolean;
        out?: string;
        quiet?: boolean;
        set: Override[];
      },
    ) => {
      const e = loadExperimentFile(file, o.set);
      const plan = planRun(e, { scale: o.scale, run: 1, sourceFile: file });
      const prediction = predict(plan);
      const say = (l: string): void => void (o.quiet ? undefined : process.stderr.write(`${l}\n`));
      process.stdout.write(
        `${e.name}: fluid prediction\n${describePrediction(prediction)
          .slice(2)
          .map((l) => l.replace(/^\| (.*) \| (.*) \|$/, '  $1: $2'))
          .join('\n')}\n`,
      );
      for (const c of prediction.caveats) process.stdout.write(`  not in the model: ${c}\n`);
      let map = null;
      let wallS: number | null = null;
      if (o.map) {
        const capacity = nominalCapacityPerS(e);
        const rates = (o.rates ?? ['10%', '20%', '35%', '50%', '70%', '80%', '90%']).map((s) => {
          const pct = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(s);
          if (pct) return Math.round(capacity * Number(pct[1])) / 100;
          const r = parseRate(s.includes('/') || s.includes('capacity') ? s : `${s}/s`);
          if (!r.ok) throw new InvalidArgumentError(`--rates: ${r.message}`);
          return 'perS' in r.value ? r.value.perS : (capacity * r.value.capacityFraction) / 100;
        });
        const d = e.schedule.triggers[0]?.duration ?? 10_000;
        const durationsMs = o.durations ?? [0.1, 0.25, 0.5, 1].map((f) => Math.round(d * f));
        // The verdict is judged on whole-second buckets: a recovery deadline (k × D, scaled)
        // under 2 s cannot tell a recovery from a collapse.
        const tooShort = durationsMs.filter((ms) => e.recovery.within * ms * o.scale < 2000);
        if (tooShort.length)
          say(
            `${e.name}: note: with trigger durations of ${tooShort.map((ms) => `${(ms * o.scale) / 1000} s`).join(', ')} the recovery deadline (${e.recovery.within} × D) is under 2 s, shorter than the verdict's one-second resolution`,
          );
        say(`${e.name}: simulating ${rates.length} loads × ${durationsMs.length} trigger durations`);
        const t0 = performance.now();
        map = await simulatedMap(file, {
          rates,
          durationsMs,
          scale: o.scale,
          overrides: o.set,
          onPoint: (i, n, row, ms) =>
            say(
              `  ${i}/${n}: load ${row.factors['offered load']}/s, trigger ${row.factors['trigger duration']} s: ${row.verdict} (${Math.round(ms)} ms)`,
            ),
        });
        wallS = (performance.now() - t0) / 1000;
        process.stdout.write(
          `\nsimulated map (M metastable, R recovered):\n${mapTable(map, prediction.range).join('\n')}\n`,
        );
      }
      const dir = resultsDir(`${e.name}-model`, o.out);
      await writeModel(dir, {
        experiment: e,
        file,
        overrides: describeOverrides(o.set),
        scale: o.scale,
        prediction,
        map,
        mapWallS: wallS,
      });
      process.stdout.write(`${dir}\n`);
    },
  );
}
