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
import { ctmcBeside } from '../analysis/markov/experiment.js';
import { simulate } from './simulate.js';
import { planOfFile } from '../../test/helpers/plan.js';
import { round } from '../../foundation/round.js';

/** retry-storm made Metafor's README system: one worker at 10/s, 3 s timeout, 5 attempts, 5/s. */
const METAFOR_SET = [
  'lab.api.workers=1',
  'lab.api.work.mean=100ms',
  'client.timeout=3s',
  'client.retry.maxAttempts=5',
  'load.rate=5/s',
];

function metaforExperiment() {
  return loadExperimentFile(
    'experiments/retry-storm.yaml',
    METAFOR_SET.map((s) => (parseSet(s) as { ok: true; value: Override }).value),
  );
}

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
      gap: { ratePerS: number };
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
  const e = metaforExperiment();
  const direct = readChain(chainParamsOf(e, 5, { queueBound: 100, orbitBound: 20 }));
  assert.equal(c.atOffered.offeredPerS, 5);
  assert.equal(c.atOffered.recoveryS, direct.recoveryS);
  // The spectral gap at the offered load, by the same chain.
  const gap = readChain(chainParamsOf(e, 5, { queueBound: 100, orbitBound: 20 }), { gap: true }).relaxation!;
  assert.ok(gap.converged);
  assert.equal(model.ctmc.gap.ratePerS, gap.ratePerS);
  assert.match(
    r.stdout,
    new RegExp(`spectral gap: ${gap.ratePerS.toExponential(3).replace('+', '\\+')}/s, relaxation time`),
  );
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

test('docs/reproductions.md: the R13 table is what the chain computes', () => {
  const doc = readFileSync(new URL('../../../docs/reproductions.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('### The port checked against its source'));
  const rows = [...section.matchAll(/^\| (\d+) \| ([\d.]+) \| ([\d.e]+) s \| /gm)];
  assert.equal(rows.length, 4);
  for (const [, l, eq, rec] of rows) {
    const r = readChain(chainParamsOf(metaforExperiment(), Number(l), { queueBound: 100, orbitBound: 20 }), {
      regions: { collapsedFrom: 30, healthyBelow: 10 },
    });
    assert.equal(Number(eq), Number(r.meanJobs.toPrecision(3)), `E[q] at λ ${l}`);
    assert.equal(Number(rec), Number(r.recoveryS!.toPrecision(3)), `recovery at λ ${l}`);
  }
});

test('docs/reproductions.md worked example: at 200/s after a 2 s pause the simulation stays collapsed; the chain predicts a recovery with alpha 0.25, not with alpha 1', async () => {
  const plan = planOfFile('retry-storm', { scale: 0.2, set: ['load.rate=200/s'] });
  const sim = (await simulate(plan)).summary;
  assert.equal(sim.metastable, true);
  assert.equal(sim.recoveryDeadlineS, 10);
  const e = plan.experiment;
  const quarter = ctmcBeside(e, 200, sim.recoveryDeadlineS);
  const all = ctmcBeside(e, 200, sim.recoveryDeadlineS, { alpha: 1 });
  const doc = readFileSync(new URL('../../../docs/reproductions.md', import.meta.url), 'utf8');
  assert.ok(
    doc.includes(
      `with probability ${round(quarter.pRecoveredWithin!, 2)} (mean ${Math.round(quarter.recoveryS!)} s from a full server)`,
    ),
    JSON.stringify(quarter),
  );
  assert.ok(all.pRecoveredWithin! < 1e-8 && all.recoveryS === null, JSON.stringify(all));
});
