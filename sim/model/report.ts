import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rowsToCsv } from '../../orchestrator/report/exports.js';
import { sweepFigures } from '../../orchestrator/report/figures/sweep.js';
import type { SweepTable } from '../../orchestrator/report/tables.js';
import { svgFiles, writeFiles } from '../../orchestrator/report/writeReport.js';
import { writeJson } from '../../orchestrator/results/files.js';
import type { Experiment } from '../../orchestrator/spec/schema.js';
import { describeTrigger } from '../../orchestrator/spec/sections/schedule.js';
import { mapTable, MAP_FACTORS } from './map.js';
import { describePrediction, type Prediction } from './predict.js';

/**
 * The folder `metabench model` writes: model.md (the fluid prediction and the
 * simulated map), model.json (both as data), map.csv, and the map's figures drawn by
 * the sweep report's own code (figures/sweep-map.svg and one line chart per figure of
 * merit, each with its .csv and .vl.json).
 */
export async function writeModel(
  dir: string,
  x: {
    readonly experiment: Experiment;
    readonly file: string;
    readonly overrides: readonly string[];
    readonly scale: number;
    readonly prediction: Prediction;
    readonly map: SweepTable | null;
    readonly mapWallS: number | null;
  },
): Promise<string[]> {
  const p = x.prediction;
  const lines = [
    `# Model: ${x.experiment.name}`,
    '',
    `From ${x.file}${x.overrides.length ? ` with ${x.overrides.map((o) => `--set ${o}`).join(' ')}` : ''}. The fluid (mean-field) model of a retry-sustained overload, then a simulated map of the metastable region (runtime sim, --scale ${x.scale}).`,
    '',
    '## Fluid prediction',
    '',
    ...describePrediction(p),
    '',
    'Below cμ/m the collapsed state cannot last: even if every attempt times out, the api receives m·λ < cμ and drains its backlog. ' +
      'Above λ* = max over Λ < cμ of Λ·(1 − p(Λ))/(1 − p(Λ)^m) there is no healthy fixed point of Λ = λ·(1 − p^m)/(1 − p) left, p(Λ) being the chance that an attempt’s sojourn in an M/M/c-like queue at Λ exceeds the timeout. ' +
      'In between both states are stable: which one the system is in depends on its history, i.e. on the trigger (derivation in sim/model/fluid.ts and the README).',
    ...(p.caveats.length ? ['', '**Not in the model**:', '', ...p.caveats.map((c) => `- ${c}`)] : []),
  ];
  const files: { path: string; content: string }[] = [];
  if (x.map) {
    const figs = sweepFigures(x.map);
    lines.push(
      '',
      '## Simulated map of the metastable region',
      '',
      `Each cell is one simulated run of the experiment (trigger: ${describeTrigger(x.experiment.schedule.triggers[0]!, x.scale)} as written; its duration varied) at that offered load: **M** metastable (not recovered within ${x.experiment.recovery.within} × the trigger’s duration), R recovered, ? unmeasured. ` +
        `Loads below cμ/m are marked (stable), above λ* (unstable). The observation is cut to what each verdict needs.${x.mapWallS !== null ? ` ${x.map.rows.length} runs simulated in ${x.mapWallS.toFixed(1)} s.` : ''}`,
      '',
      ...mapTable(x.map, p.range),
      '',
      ...figs.map((f) => `![${f.title}](figures/${f.id}.svg)\n\n*${f.caption}*\n`),
    );
    files.push(...(await svgFiles(figs)));
    for (const f of figs) {
      files.push({ path: `figures/${f.id}.csv`, content: rowsToCsv(f.data) });
      files.push({ path: `figures/${f.id}.vl.json`, content: JSON.stringify(f.spec, null, 2) + '\n' });
    }
    files.push({
      path: 'map.csv',
      content: rowsToCsv(
        x.map.rows.map((r) => ({
          [`${MAP_FACTORS[0].name} (${MAP_FACTORS[0].unit})`]: r.factors[MAP_FACTORS[0].name] ?? null,
          [`${MAP_FACTORS[1].name} (${MAP_FACTORS[1].unit})`]: r.factors[MAP_FACTORS[1].name] ?? null,
          verdict: r.verdict,
          ...Object.fromEntries(
            x.map!.figures.map((f) => [`${f.name} (${f.unit})`, r.figures[f.name] ?? null]),
          ),
        })),
      ),
    });
  }
  writeFiles(dir, files);
  writeFileSync(join(dir, 'model.md'), lines.join('\n') + '\n');
  writeJson(join(dir, 'model.json'), {
    experiment: x.experiment.name,
    file: x.file,
    overrides: x.overrides,
    scale: x.scale,
    fluid: {
      system: p.system,
      range: p.range,
      offeredPerS: p.offeredPerS,
      region: p.region,
      healthy: p.healthy,
      caveats: p.caveats,
    },
    map: x.map,
  });
  return ['model.md', 'model.json', ...files.map((f) => f.path)];
}
