import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rowsToCsv, type OutFile } from '../report/exports.js';
import { sweepFigures } from '../report/figures/sweep.js';
import type { SweepTable } from '../report/tables.js';
import { svgFiles, writeFiles } from '../report/writeReport.js';
import { writeJson } from '../results/files.js';
import type { Experiment } from '../spec/schema.js';
import { describeTrigger } from '../spec/sections/schedule.js';
import type { LabSweep } from './labSweep.js';
import { invalidCells, mapTable, MAP_FACTORS } from './map.js';
import {
  describeJoin,
  labOverlay,
  pointName,
  sameCoordinate,
  type JoinedPoint,
  type LabJoin,
} from './over.js';
import { describeModelCapacity, describePrediction, type Prediction } from './predict.js';
import { boundaryLines, predictedAt, type MagnitudeModel } from './magnitude.js';
import { ctmcAtLabLines, ctmcFigure, ctmcSection, type CtmcAtLabPoint, type CtmcModel } from './ctmc.js';

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
    /** The map is over the trigger's magnitude (--magnitudes): the fluid model's boundary over it. */
    readonly magnitudes?: MagnitudeModel | null;
    /** Lab sweeps drawn over the map, and their points joined to its cells. */
    readonly lab?: { readonly sweeps: readonly LabSweep[]; readonly join: LabJoin } | null;
    /** The Markov model over offered load (--ctmc). */
    readonly ctmc?: CtmcModel | null;
    /** With --ctmc and --over: each lab point with the Markov model's prediction. */
    readonly ctmcLab?: readonly CtmcAtLabPoint[] | null;
  },
): Promise<string[]> {
  const lab = x.map ? (x.lab ?? null) : null;
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
      'In between both states are stable: which one the system is in depends on its history, i.e. on the trigger (derivation in orchestrator/model/fluid.ts and docs/queueing-model.md).',
    ...(p.caveats.length ? ['', '**Not in the model**:', '', ...p.caveats.map((c) => `- ${c}`)] : []),
  ];
  const files: OutFile[] = [];
  if (x.ctmc) {
    const fig0 = ctmcFigure(x.ctmc, p.range);
    const fig = { ...fig0, caption: `${fig0.caption} Model capacity: ${describeModelCapacity(p)}.` };
    lines.push(
      '',
      ...ctmcSection(x.ctmc, p.range),
      '',
      `![${fig.title}](figures/${fig.id}.svg)\n\n*${fig.caption}*`,
    );
    files.push(...(await svgFiles([fig])));
    files.push({ path: `figures/${fig.id}.csv`, content: rowsToCsv(fig.data) });
    files.push({ path: `figures/${fig.id}.vl.json`, content: JSON.stringify(fig.spec, null, 2) + '\n' });
  }
  if (x.map) {
    // Each figure says which capacity the model (and the simulated api) took.
    const mag = x.magnitudes ?? null;
    const figs = sweepFigures(
      x.map,
      lab ? labOverlay(x.map, lab.join) : undefined,
      mag ? predictedCells(x.map, mag) : undefined,
    ).map((f) => ({
      ...f,
      caption: `${f.caption} Model capacity: ${describeModelCapacity(p)}.`,
    }));
    lines.push(
      '',
      '## Simulated map of the metastable region',
      '',
      ...(mag ? magnitudeSection(x.experiment, x.map, mag, x.scale) : []),
      `Each cell is one simulated run of the experiment (trigger: ${describeTrigger(x.experiment.schedule.triggers[0]!, x.scale)} as written; its ${mag ? x.map.factors[1]!.name : 'duration'} varied) at that offered load: **M** metastable (not recovered within ${x.experiment.recovery.within} × the trigger’s duration), R recovered, ? unmeasured, I invalid (the simulated run failed a validity check: each such cell is listed below the table with the checks it failed). ` +
        `Loads below cμ/m are marked (stable), above λ* (unstable). The observation is cut to what each verdict needs.${x.mapWallS !== null ? ` ${x.map.rows.length} runs simulated in ${x.mapWallS.toFixed(1)} s.` : ''}`,
      '',
      ...(lab
        ? [
            `With the lab over it: a cell with a lab point reads model / lab (lab points repeated give their metastable runs / runs), ✗ where they disagree; – / lab where the lab has a point and the map no cell. ${describeJoin(lab.join)}.`,
            '',
          ]
        : []),
      ...mapTable(x.map, p.range, lab?.join, mag ? predictedAt(mag) : undefined),
      ...(mag ? ['', ...boundaryLines(mag)] : []),
      '',
      ...(invalidCells(x.map).length
        ? [
            'Invalid cells (no verdict), with the validity checks their runs failed:',
            '',
            ...invalidCells(x.map),
            '',
          ]
        : []),
      ...(lab ? labSection(lab.sweeps, lab.join) : []),
      ...(lab && x.ctmcLab ? [...ctmcAtLabLines(x.ctmcLab), ''] : []),
      ...figs.map((f) => `![${f.title}](figures/${f.id}.svg)\n\n*${f.caption}*\n`),
    );
    files.push(...(await svgFiles(figs)));
    for (const f of figs) {
      files.push({ path: `figures/${f.id}.csv`, content: rowsToCsv(f.data) });
      files.push({ path: `figures/${f.id}.vl.json`, content: JSON.stringify(f.spec, null, 2) + '\n' });
    }
    const axisY = x.map.factors[1] ?? MAP_FACTORS[1];
    files.push({
      path: 'map.csv',
      content: rowsToCsv(
        x.map.rows.map((r) => ({
          [`${MAP_FACTORS[0].name} (${MAP_FACTORS[0].unit})`]: r.factors[MAP_FACTORS[0].name] ?? null,
          [`${axisY.name} (${axisY.unit})`]: r.factors[axisY.name] ?? null,
          verdict: r.verdict,
          ...(mag
            ? {
                'model verdict':
                  predictedAt(mag)(Number(r.factors[MAP_FACTORS[0].name]), Number(r.factors[axisY.name])) ??
                  null,
              }
            : {}),
          'invalid because': r.verdict === 'invalid' ? (r.outcomes ?? 'not recorded') : null,
          ...(lab ? labAtCell(lab.join.points, r.factors) : {}),
          ...Object.fromEntries(
            x.map!.figures.map((f) => [`${f.name} (${f.unit})`, r.figures[f.name] ?? null]),
          ),
        })),
      ),
    });
  }
  if (lab)
    files.push({
      path: 'lab.csv',
      content: rowsToCsv(
        lab.join.points.map((q) => ({
          sweep: q.sweep,
          point: q.point,
          ...Object.fromEntries(lab.sweeps.flatMap((s) => s.factors).map((f) => [f, q.factors[f] ?? null])),
          [`${MAP_FACTORS[0].name} (${MAP_FACTORS[0].unit})`]: q.offeredPerS,
          [`${MAP_FACTORS[1].name} (${MAP_FACTORS[1].unit})`]: q.triggerS,
          'lab verdict': q.verdict,
          runs: q.runs ?? null,
          'metastable runs': q.metastableRuns ?? null,
          'model verdict': q.model,
          agree: q.agree,
          ...(x.ctmcLab ? ctmcLabCells(x.ctmcLab, q) : {}),
        })),
      ),
    });
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
      capacity: { ...p.capacity, workScale: p.workScale },
    },
    map: x.map,
    ...(x.magnitudes ? { magnitudes: x.magnitudes } : {}),
    ...(x.ctmc ? { ctmc: { ...x.ctmc, ...(lab && x.ctmcLab ? { lab: x.ctmcLab } : {}) } } : {}),
    ...(lab
      ? {
          lab: {
            sweeps: lab.sweeps.map((s) => ({
              dir: s.dir,
              kind: s.kind ?? 'sweep',
              name: s.name,
              runtime: s.runtime,
              scale: s.scale,
              experimentFile: s.experimentFile,
              overrides: s.overrides,
              factors: s.factors,
              notes: s.notes,
            })),
            agree: lab.join.agree,
            disagree: lab.join.disagree,
            noCell: lab.join.noCell,
            unmeasured: lab.join.unmeasured,
            points: lab.join.points,
          },
        }
      : {}),
  });
  return ['model.md', 'model.json', ...files.map((f) => f.path)];
}

/** map.csv's lab columns at one cell: the verdicts of the lab points there, and whether all agree. */
function labAtCell(
  points: readonly JoinedPoint[],
  factors: Readonly<Record<string, string | number>>,
): Record<string, string | boolean | null> {
  const here = points.filter(
    (q) =>
      sameCoordinate(q.offeredPerS, Number(factors[MAP_FACTORS[0].name])) &&
      sameCoordinate(q.triggerS, Number(factors[MAP_FACTORS[1].name])),
  );
  const compared = here.filter((q) => q.agree !== null);
  return {
    'lab verdict': here.length ? here.map((q) => q.verdict).join(' ') : null,
    'lab agrees': compared.length ? compared.every((q) => q.agree === true) : null,
  };
}

/** model.md's account of the lab sweeps drawn over the map, and of every point where they disagree. */
function labSection(sweeps: readonly LabSweep[], j: LabJoin): string[] {
  const at = (q: JoinedPoint): string =>
    `${pointName(q)} (${[
      ...Object.entries(q.factors).map(([k, v]) => `${k}=${v}`),
      `${q.offeredPerS} origins/s, trigger ${q.triggerS} s`,
    ].join(': ')})`;
  const disagree = j.points.filter((q) => q.agree === false);
  const notCompared = j.points.filter((q) => q.agree === null);
  return [
    '### The lab over the map',
    '',
    ...sweeps.map((s) =>
      s.kind === 'run'
        ? `- ${s.dir}: ${s.points[0]?.runs ?? 0} run${s.points[0]?.runs === 1 ? '' : 's'} of ${s.name} (${s.experimentFile}), runtime ${s.runtime}, --scale ${s.scale}: one lab point${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`
        : `- ${s.dir}: sweep ${s.name} of ${s.experimentFile}, runtime ${s.runtime}, --scale ${s.scale}${s.overrides.length ? `, ${s.overrides.map((o) => `--set ${o}`).join(' ')}` : ''}; ${s.points.length} point${s.points.length === 1 ? '' : 's'} varying ${s.factors.join(' and ')}${s.notes.length ? ` (${s.notes.join('; ')})` : ''}`,
    ),
    '',
    ...(disagree.length
      ? [
          'Where they disagree (✗):',
          '',
          ...disagree.map((q) => `- ${at(q)}: model ${q.model}, lab ${q.verdict}`),
          '',
        ]
      : []),
    ...(notCompared.length
      ? [
          'Not compared (no model cell at the point’s load and trigger duration, or a verdict unmeasured):',
          '',
          ...notCompared.map((q) => `- ${at(q)}: model ${q.model ?? 'no cell'}, lab ${q.verdict}`),
          '',
        ]
      : []),
    ...(disagree.length === 0 && notCompared.length === 0
      ? ['Every lab point agrees with the model’s cell.', '']
      : []),
  ];
}

/** lab.csv's CTMC columns for one lab point (with --ctmc). */
function ctmcLabCells(
  rows: readonly CtmcAtLabPoint[],
  q: JoinedPoint,
): Record<string, number | string | null> {
  const r = rows.find((x) => x.sweep === q.sweep && x.point === q.point);
  return {
    'recovery deadline (s)': r?.deadlineS ?? null,
    'CTMC mean recovery (s)': r?.ctmc.recoveryS ?? null,
    'CTMC P(recovered within deadline)': r?.ctmc.pRecoveredWithin ?? null,
    'CTMC verdict': r?.ctmcVerdict ?? null,
  };
}

/** The fluid model's verdict at every cell, for the map figure's boundary line. */
function predictedCells(map: SweepTable, m: MagnitudeModel): Parameters<typeof sweepFigures>[2] {
  if (m.notPredicted) return undefined;
  const y = map.factors[1]!.name;
  const at = predictedAt(m);
  return {
    name: 'fluid model',
    cells: map.rows.flatMap((r) => {
      const v = at(Number(r.factors[MAP_FACTORS[0].name]), Number(r.factors[y]));
      return v === null
        ? []
        : [{ x: r.factors[MAP_FACTORS[0].name]!, y: r.factors[y]!, metastable: v === 'metastable' }];
    }),
    boundary: m.loads
      .map((l) => `${l.load}/s: ${l.boundary ?? (l.region === 'bistable' ? 'none' : l.region)}`)
      .join(', '),
  };
}

/** model.md's account of a map over the trigger's magnitude: what varies, and the model's boundary. */
function magnitudeSection(e: Experiment, map: SweepTable, m: MagnitudeModel, scale: number): string[] {
  const y = map.factors[1]!;
  return [
    `Over the trigger's magnitude: ${y.name} (${y.unit}) varied, the trigger otherwise as written (${describeTrigger(e.schedule.triggers[0]!, scale)}). ` +
      (m.notPredicted
        ? `No predicted boundary: ${m.notPredicted}.`
        : 'The fluid model’s boundary: during the trigger the backlog grows at Λ_h − cμ′ (cμ′ the degraded capacity: cμ/k for a slowdown by k, n·μ for a pool of n; for a load spike ×f the offered f·Λ_h against cμ), and at m·λ − cμ′ once its wait passes τ; the api tips into the collapsed state when the backlog left at the trigger’s end is at least cμ·τ (its wait then exceeds the timeout), and stays there for λ ≥ cμ/m. ' +
          'A cell reads the simulated verdict, with (model X) where the model predicts otherwise; the figure draws the model’s boundary as a dashed step line between the cells it predicts metastable and those it predicts recovered (derivation and limits in orchestrator/model/magnitude.ts and docs/queueing-model.md).'),
    '',
  ];
}
