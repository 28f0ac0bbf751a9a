import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { extract } from 'tar';
import { BenchError } from '../../foundation/errors.js';
import type { Experiment } from '../spec/schema.js';
import { BUNDLE_FORMAT, BUNDLE_ROOT, type BundleInfo } from './bundleInfo.js';

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
  if (!existsSync(file) || !statSync(file).isFile())
    throw new BenchError('E_USAGE', `--from-bundle ${file}: no such file`);
  const dir = mkdtempSync(join(tmpdir(), 'metabench-unbundle-'));
  const close = () => rmSync(dir, { recursive: true, force: true });
  try {
    try {
      // strict: a damaged archive is an error, not a warning with half the files.
      await extract({ file, cwd: dir, strict: true });
    } catch (err) {
      throw new BenchError(
        'E_USAGE',
        `--from-bundle ${file}: not a readable .tar.gz (${(err as Error).message})`,
      );
    }
    const root = join(dir, BUNDLE_ROOT);
    const info = readJson<BundleInfo>(file, root, 'BUNDLE.json');
    if (info.format !== BUNDLE_FORMAT)
      throw new BenchError(
        'E_USAGE',
        `--from-bundle ${file}: BUNDLE.json: format ${String(info.format)}, this metabench reads format ${BUNDLE_FORMAT}`,
      );
    const experiment = readJson<Experiment>(file, root, 'experiment.json');
    return { info, experiment, resultsDir: join(root, 'results'), close };
  } catch (err) {
    close();
    throw err;
  }
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
