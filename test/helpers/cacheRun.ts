import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, tempDir } from './cli.js';
import { assertTwinAgrees } from './twin.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import type { LabTopology } from '../../orchestrator/lab/Lab.js';
import { suiteScale } from './catalogue.js';
import { reproRuntimeArgs } from './experiment.js';

// The cache experiments as the reproduction suite runs them (issue 6): at the suite's scale
// on the local lab with real redis-server and postgres processes, with their simulated twins.

export async function run(file: string, tag: string) {
  const tmp = tempDir(tag);
  const out = join(tmp, 'out');
  const scale = suiteScale(file.replace(/^.*\//, '').replace(/\.yaml$/, ''));
  const r = await runCli(
    ['run', file, '--scale', String(scale), '--repeat', '1', '--out', out, '--quiet', ...reproRuntimeArgs()],
    { METABENCH_STATE_DIR: join(tmp, 'state') },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  await assertTwinAgrees(file, s);
  const manifest = JSON.parse(readFileSync(join(out, 'run-1/manifest.json'), 'utf8')) as {
    topology: LabTopology;
  };
  const [header, ...rows] = readFileSync(join(out, 'run-1/timeseries.csv'), 'utf8').trim().split('\n');
  const cols = header!.split(',');
  const column = (name: string): number[] => {
    const i = cols.indexOf(name);
    assert.ok(i >= 0, `timeseries.csv has ${name}`);
    return rows.map((r) => Number(r.split(',')[i]));
  };
  return { out, s, manifest, cols, column };
}

export function sumOf(a: number[]): number {
  return a.reduce((x, y) => x + (Number.isFinite(y) ? y : 0), 0);
}
