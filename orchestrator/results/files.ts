import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BenchError } from '../../foundation/errors.js';

export function writeJson(file: string, data: unknown): void {
  writeFileSync(file, JSON.stringify(data, null, 2) + '\n');
}

/**
 * The experiment's results folder: `--out DIR` when given (refused if it already holds
 * results), else results/<date>-<name>[-n] under `root`, never overwritten.
 */
export function resultsDir(
  name: string,
  out: string | undefined,
  root = 'results',
  now = new Date(),
): string {
  if (out) {
    if (
      existsSync(join(out, 'summary.json')) ||
      (existsSync(out) && readdirSync(out).some((f) => f.startsWith('run-')))
    )
      throw new BenchError(
        'E_USAGE',
        `${out} already holds results; results are never overwritten (choose another --out)`,
      );
    mkdirSync(out, { recursive: true });
    return out;
  }
  const date = now.toISOString().slice(0, 10);
  for (let n = 1; ; n++) {
    const dir = join(root, n === 1 ? `${date}-${name}` : `${date}-${name}-${n}`);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true });
      return dir;
    }
  }
}
