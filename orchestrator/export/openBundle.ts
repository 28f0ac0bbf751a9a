import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract } from 'tar';
import { BenchError } from '../../foundation/errors.js';
import type { Experiment } from '../spec/schema.js';
import type { PlannedCapacity } from '../spec/plan.js';
import { BUNDLE_FORMAT, BUNDLE_ROOT, type BundleInfo, type SweepBundleInfo } from './bundleInfo.js';
import type { RecordedSweepPlan } from './latex/sweep.js';

export interface OpenedBundle {
  readonly info: BundleInfo;
  /** The resolved experiment exactly as it ran. */
  readonly experiment: Experiment;
  /** The bundled results folder (summary.json, run-<i>/…), until `close`. */
  readonly resultsDir: string;
  close(): void;
}

/**
 * Unpacks a bundle `metabench export bundle` wrote into a temporary folder and reads it.
 * A missing, corrupt or foreign file is a clear error naming it (exit 2), never a stack trace.
 */
export async function openBundle(file: string): Promise<OpenedBundle> {
  const { root, close } = await unpack(file);
  try {
    const info = readJson<BundleInfo & { kind?: string }>(file, root, 'BUNDLE.json');
    checkFormat(file, info);
    if (info.kind === 'sweep')
      throw new BenchError(
        'E_USAGE',
        `--from-bundle ${file}: the bundle of a sweep: re-run it with metabench sweep --from-bundle`,
      );
    const experiment = readJson<Experiment>(file, root, 'experiment.json');
    return { info, experiment, resultsDir: join(root, 'results'), close };
  } catch (err) {
    close();
    throw err;
  }
}

export interface OpenedSweepBundle {
  readonly info: SweepBundleInfo;
  /** sweep-plan.json as the sweep wrote it. */
  readonly plan: RecordedSweepPlan;
  /** Each point with results: its resolved experiment and the capacity its first run planned with. */
  readonly points: ReadonlyMap<number, { experiment: Experiment; capacity: PlannedCapacity }>;
  readonly resultsDir: string;
  close(): void;
}

/** A sweep's bundle (sweepBundle.ts), unpacked and read; errors as openBundle's. */
export async function openSweepBundle(file: string): Promise<OpenedSweepBundle> {
  const { root, close } = await unpack(file);
  try {
    const info = readJson<SweepBundleInfo>(file, root, 'BUNDLE.json');
    checkFormat(file, info);
    if (info.kind !== 'sweep')
      throw new BenchError(
        'E_USAGE',
        `--from-bundle ${file}: the bundle of one experiment, not a sweep: re-run it with metabench run --from-bundle`,
      );
    const plan = readJson<RecordedSweepPlan>(file, root, 'sweep-plan.json');
    const points = new Map<number, { experiment: Experiment; capacity: PlannedCapacity }>();
    for (const p of plan.points) {
      if (!existsSync(join(root, 'experiments', `point-${p.index}.json`))) continue;
      const manifest = readJson<{ capacity: PlannedCapacity }>(
        file,
        root,
        join('results', `point-${p.index}`, 'run-1', 'manifest.json'),
      );
      points.set(p.index, {
        experiment: readJson<Experiment>(file, root, join('experiments', `point-${p.index}.json`)),
        capacity: manifest.capacity,
      });
    }
    return { info, plan, points, resultsDir: join(root, 'results'), close };
  } catch (err) {
    close();
    throw err;
  }
}

/** The bundle unpacked into a temporary folder; a damaged archive is an error naming it. */
async function unpack(file: string): Promise<{ root: string; close: () => void }> {
  if (!existsSync(file) || !statSync(file).isFile())
    throw new BenchError('E_USAGE', `--from-bundle ${file}: no such file`);
  const dir = mkdtempSync(join(tmpdir(), 'metabench-unbundle-'));
  const close = () => rmSync(dir, { recursive: true, force: true });
  try {
    // strict: a damaged archive is an error, not a warning with half the files.
    await extract({ file, cwd: dir, strict: true });
  } catch (err) {
    close();
    throw new BenchError(
      'E_USAGE',
      `--from-bundle ${file}: not a readable .tar.gz (${(err as Error).message})`,
    );
  }
  return { root: join(dir, BUNDLE_ROOT), close };
}

function checkFormat(file: string, info: { format?: unknown }): void {
  if (info.format !== BUNDLE_FORMAT)
    throw new BenchError(
      'E_USAGE',
      `--from-bundle ${file}: BUNDLE.json: format ${String(info.format)}, this metabench reads format ${BUNDLE_FORMAT}`,
    );
}

function readJson<T>(bundle: string, root: string, name: string): T {
  const path = join(root, name);
  if (!existsSync(path))
    throw new BenchError(
      'E_USAGE',
      `--from-bundle ${bundle}: not a metabench bundle (no ${BUNDLE_ROOT}/${name})`,
    );
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as T;
  } catch (err) {
    throw new BenchError(
      'E_USAGE',
      `--from-bundle ${bundle}: ${BUNDLE_ROOT}/${name}: not JSON (${(err as Error).message})`,
    );
  }
}
