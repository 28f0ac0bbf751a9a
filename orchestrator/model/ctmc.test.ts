import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../test/helpers/cli.js';
import { loadExperimentFile } from '../spec/load.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import { chainParamsOf } from '../analysis/markov/experiment.js';
import { readChain } from '../analysis/markov/retryChain.js';

/** retry-storm made Metafor's README system: one worker at 10/s, 3 s timeout, 5 attempts, 5/s. */
const METAFOR_SET = [
  'lab.api.workers=1',
  'lab.api.work.mean=100ms',
  'client.timeout=3s',
  'client.retry.maxAttempts=5',
  'load.rate=5/s',
];

test('metabench model --ctmc: predicted recovery times over offered load in model.md, model.json and a log-scale figure, equal to the chain’s', async () => {
  const out = join(mkdtempSync(join(tmpdir(), 'markov-ctmc-')), 'm');
  const r = await runCli([
    'model',
    'experiments/retry-storm.yaml',
    ...METAFOR_SET.flatMap((s) => ['--set', s]),
    '--no-map',
    '--ctmc',
    '--queue-bound',
    '100',
    '--orbit-bound',
    '20',
    '--out',
    out,
    '--quiet',
  ]);
  assert.equal(r.code, 0, r.stderr);
  const model = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as {
    ctmc: {
      params: { queueSize: number; orbitSize: number; granularity: number; alpha: number };
      atOffered: { offeredPerS: number; recoveryS: number; meanJobs: number };
      points: { offeredPerS: number; recoveryS: number | null; collapseS: number | null }[];
    };
  };
  const c = model.ctmc;
  assert.deepEqual(
    [c.params.queueSize, c.params.orbitSize, c.params.granularity, c.params.alpha],
    [100, 20, 1, 0.25],
  );
  assert.deepEqual(
    c.points.map((p) => p.offeredPerS),
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
  );
  // The same file's chain, solved here, gives the same numbers; and they are R13's (328 s at λ 5).
  const e = loadExperimentFile(
    'experiments/retry-storm.yaml',
    METAFOR_SET.map((s) => (parseSet(s) as { ok: true; value: Override }).value),
  );
  const direct = readChain(chainParamsOf(e, 5, { queueBound: 100, orbitBound: 20 }));
  assert.equal(c.atOffered.offeredPerS, 5);
  assert.equal(c.atOffered.recoveryS, direct.recoveryS);
  assert.ok(Math.abs(c.atOffered.recoveryS / 328 - 1) < 0.05, `${c.atOffered.recoveryS}`);
  // Recovery slows with load, collapse comes sooner: the physics of the bistable range.
  const rec = c.points.map((p) => p.recoveryS ?? Infinity);
  const col = c.points.map((p) => p.collapseS ?? Infinity);
  for (let i = 1; i < rec.length; i++) {
    assert.ok(rec[i]! >= rec[i - 1]!, `recovery at ${c.points[i]!.offeredPerS}`);
    assert.ok(col[i]! <= col[i - 1]!, `collapse at ${c.points[i]!.offeredPerS}`);
  }
  const md = readFileSync(join(out, 'model.md'), 'utf8');
  assert.match(md, /## Markov model \(CTMC\)/);
  assert.match(md, /\| 5 \| bistable \| 1\.002 \| [^|]+ \| 5\.5 min \|/);
  assert.match(md, /\*\*Assumptions of the CTMC\*\*/);
  assert.match(r.stdout, /predicted recovery time.*5\.5 min at 5 origins\/s/);
  const svg = readFileSync(join(out, 'figures/ctmc-recovery.svg'), 'utf8');
  assert.match(svg, /bistable \(fluid model\)/);
  assert.match(svg, /log scale/);
  for (const f of ['figures/ctmc-recovery.csv', 'figures/ctmc-recovery.vl.json'])
    assert.ok(existsSync(join(out, f)), f);
  // The knobs need --ctmc.
  const bad = await runCli([
    'model',
    'experiments/retry-storm.yaml',
    '--no-map',
    '--alpha',
    '0.5',
    '--out',
    `${out}-2`,
  ]);
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /knobs of --ctmc/);
});
