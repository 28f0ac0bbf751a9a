import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { BenchError } from '../../foundation/errors.js';
import { writeJson } from '../results/files.js';
import { readSweepPlan } from './latex/sweep.js';
import { copyRunResults, exportedWith, pack } from './bundle.js';
import { BUNDLE_FORMAT, BUNDLE_ROOT, type SweepBundleInfo } from './bundleInfo.js';
import { readRunManifest, type RunManifest } from './manifest.js';

/**
 * A sweep's reproduction bundle (`metabench export bundle` on a sweep folder):
 *   bundle/BUNDLE.json                 kind "sweep": which metabench ran and bundled it, runtime, scale, repeat
 *   bundle/sweep-plan.json             the sweep as it ran: design, factors, every point and its values
 *   bundle/experiments/point-<k>.json  each point's resolved experiment, exactly as it ran
 *   bundle/source/<files>              the sweep file and the base experiment file as written, when still readable
 *   bundle/results/…                   sweep.json, and each point's summary.json, run manifests and summaries
 *   bundle/REPRODUCE.md                the one command that re-runs it
 * `metabench sweep --from-bundle` reads it back (openBundle.ts): each point re-runs its
 * bundled experiment at the capacity its manifest recorded.
 */

/** A folder `metabench sweep` wrote: its plan and no run of its own. */
export function isSweepFolder(dir: string): boolean {
  return !existsSync(join(dir, 'run-1')) && existsSync(join(dir, 'sweep-plan.json'));
}

export async function writeSweepBundle(dir: string, out?: string): Promise<string> {
  const plan = readSweepPlan(dir);
  const done = plan.points.filter((p) => existsSync(join(dir, `point-${p.index}`, 'run-1', 'manifest.json')));
  if (done.length === 0)
    throw new BenchError(
      'E_USAGE',
      `${dir}: no point of the sweep has run (no point-<k>/run-1/manifest.json)`,
    );
  const manifests = new Map<number, RunManifest>(
    done.map((p) => [p.index, readRunManifest(join(dir, `point-${p.index}`))]),
  );
  const first = manifests.get(done[0]!.index)!;
  const file = out ?? `${resolve(dir)}.tar.gz`;
  const staging = mkdtempSync(join(tmpdir(), 'metabench-bundle-'));
  try {
    const root = join(staging, BUNDLE_ROOT);
    const results = join(root, 'results');
    mkdirSync(join(root, 'experiments'), { recursive: true });
    mkdirSync(results, { recursive: true });
    copyFileSync(join(dir, 'sweep-plan.json'), join(root, 'sweep-plan.json'));
    if (existsSync(join(dir, 'sweep.json')))
      copyFileSync(join(dir, 'sweep.json'), join(results, 'sweep.json'));
    for (const p of done) {
      writeJson(join(root, 'experiments', `point-${p.index}.json`), manifests.get(p.index)!.experiment);
      copyRunResults(join(dir, `point-${p.index}`), join(results, `point-${p.index}`));
    }
    // The files as written, for a reader; the re-run uses the resolved experiments.
    const sources = [plan.file, plan.experimentFile].filter(
      (f): f is string => typeof f === 'string' && existsSync(f),
    );
    if (sources.length) mkdirSync(join(root, 'source'));
    for (const f of sources) copyFileSync(f, join(root, 'source', basename(f)));
    const info: SweepBundleInfo = {
      format: BUNDLE_FORMAT,
      kind: 'sweep',
      sweep: plan.name,
      experiment: first.experiment.name,
      ranWith: {
        metabench: first.metabench,
        gitRevision: first.gitRevision,
        node: first.machine?.node ?? null,
      },
      exportedWith: exportedWith(),
      runtime: plan.runtime,
      scale: plan.scale,
      repeat: plan.repeat,
      design: plan.design,
      points: plan.points.length,
      pointsWithResults: done.length,
      command: first.command,
      sourceFiles: sources.map((f) => `source/${basename(f)}`),
    };
    writeJson(join(root, 'BUNDLE.json'), info);
    writeFileSync(join(root, 'REPRODUCE.md'), reproduceSweepMd(info, first, basename(file)));
    return await pack(staging, file);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** REPRODUCE.md of a sweep's bundle: the one command that re-runs it, and what it keeps the same. */
export function reproduceSweepMd(info: SweepBundleInfo, m: RunManifest, bundleFile: string): string {
  const ran = info.ranWith;
  return [
    `# Reproducing the sweep ${info.sweep}`,
    '',
    `Re-run every point of the sweep exactly as it ran (each point's resolved experiment in`,
    '`experiments/`, at the capacity its manifest recorded, with the same runtime, scale, seeds',
    'and repetitions):',
    '',
    '```sh',
    `metabench sweep --from-bundle ${bundleFile} --out reproduced`,
    '```',
    '',
    `- base experiment: ${info.experiment}; design: ${info.design}; ${info.points} points (${info.pointsWithResults} with results in this bundle)`,
    `- runtime: ${info.runtime}`,
    `- scale: ${info.scale} (every duration of the schedule and of the recovery criterion × ${info.scale})`,
    `- repetitions per point: ${info.repeat}; each point keeps its experiment's seed (run i derives its own from it)`,
    info.command ? `- the original command: \`metabench ${info.command.join(' ')}\`` : '',
    '',
    `Ran with metabench ${ran.metabench} (git ${ran.gitRevision ?? 'unknown'}) on Node ${ran.node ?? 'unknown'},`,
    `${m.machine ? `${m.machine.cpus} × ${m.machine.cpuModel}, ${m.machine.os}` : 'machine not recorded'}.`,
    `Bundled by metabench ${info.exportedWith.metabench} (git ${info.exportedWith.gitRevision ?? 'unknown'}),`,
    `package-lock.json sha256 ${info.exportedWith.packageLockSha256 ?? 'unknown'}.`,
    '',
    'The original figures are in `results/` (sweep.json, and each point’s summary.json and its',
    'runs’ manifest.json and summary.json). A simulated sweep (`runtime: sim`) is deterministic:',
    'its re-run writes the same summary.json in every point. A lab sweep (local, docker) measures',
    'this machine, so its figures vary with it.',
    '',
  ]
    .filter((l, i, all) => l !== '' || all[i - 1] !== '')
    .join('\n');
}
