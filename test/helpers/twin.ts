import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';
import { outcomeClass, simCannotModel } from '../../orchestrator/model/agreement.js';
import { runCli, tempDir } from './cli.js';

/**
 * Lab and simulation agree (issue 17, point 10): after a reproduction test has run FILE
 * on the lab, its simulated twin (`--runtime sim`, same file, seed, scale and extra
 * arguments; seconds of wall time) must reach the same outcome class. Nothing to compare
 * when the simulation cannot model the experiment (orchestrator/model/agreement.ts) or the lab run gave
 * no verdict (invalid or unmeasured). A twin without a verdict is a failure: the simulation
 * keeps its schedule by construction. Returns the twin's summary, or null when skipped.
 */
export async function assertTwinAgrees(
  file: string,
  lab: RunSummary,
  extra: readonly string[] = [],
  env: Record<string, string> = {},
): Promise<RunSummary | null> {
  if (simCannotModel(loadExperimentFile(file)) !== null) return null;
  if (lab.outcome === 'invalid' || lab.outcome === 'unmeasured') return null;
  const out = join(tempDir('twin'), 'out');
  const r = await runCli(
    [
      'run',
      file,
      '--scale',
      String(lab.scale),
      '--repeat',
      '1',
      '--out',
      out,
      '--quiet',
      ...extra,
      '--runtime',
      'sim',
    ],
    env,
  );
  assert.ok(r.code === 0 || r.code === 10, `${file} simulated: exit ${r.code}\n${r.stderr}`);
  const sim = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(
    outcomeClass(sim.outcome),
    outcomeClass(lab.outcome),
    `${file}: the lab's outcome is ${lab.outcome} (${lab.outcomeReason}); its simulated twin's is ${sim.outcome} (${sim.outcomeReason})`,
  );
  return sim;
}
