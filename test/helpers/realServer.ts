import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { experimentPath, suiteScale } from './catalogue.js';
import { runCli, tempDir } from './cli.js';

// The catalogue's rows on real servers (lab.api.server, issue 34 point 4) as the
// reproduction suite runs them: on the local runtime (the only one that starts the
// reference servers), at the suite's scale, once.

/** The run of experiments/NAME.yaml: its summary and its folder. */
export async function runRealServerRow(name: string): Promise<{ s: RunSummary; out: string }> {
  const out = join(tempDir(name), 'out');
  const r = await runCli(
    [
      'run',
      experimentPath(name),
      '--scale',
      String(suiteScale(name)),
      '--repeat',
      '1',
      '--out',
      out,
      '--quiet',
      '--runtime',
      'local',
    ],
    { METABENCH_STATE_DIR: join(out, '..', 'state') },
  );
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.offered, s.recorded);
  assert.equal(s.usable, true);
  return { s, out };
}
