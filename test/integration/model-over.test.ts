import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { runCli, tempDir } from '../helpers/cli.js';
import { loadExperimentFile } from '../../orchestrator/spec/load.js';
import { ctmcBeside } from '../../orchestrator/analysis/markov/experiment.js';

// The issue's "the lab sweep can then be drawn over it": `metabench model FILE --over DIR`
// reads a sweep's results folder and draws its points over the simulated map. Both sweeps
// run in simulation (virtual time), so the whole test takes seconds: a factorial sweep of
// offered load × trigger duration, and one of the load alone (its trigger the file's 2 s).
const EXPERIMENT = `name: over-small
lab: { api: { workers: 4, work: { dist: exponential, mean: 10ms }, queue: fifo } }
load: { arrival: poisson, rate: 60% capacity }
client: { timeout: 200ms, retry: { policy: immediate, maxAttempts: 3 } }
schedule:
  warmup: 2s
  baseline: 5s
  trigger: { kind: pause, target: api, duration: 2s }
  observe: 20s
recovery: { within: 3x, tolerance: 10%, window: 1s, hold: 2s }
seed: 7
`;
const GRID = `name: over-grid
experiment: over-small.yaml
design: factorial
factors:
  - { path: load.rate, values: [100/s, 200/s, 60% capacity] }
  - { path: schedule.trigger.duration, values: [1s, 4s] }
`;
const RATE = `name: over-rate
experiment: over-small.yaml
factors:
  - { path: load.rate, values: [100/s, 300/s] }
`;
const ATTEMPTS = `name: over-attempts
experiment: over-small.yaml
factors:
  - { path: client.retry.maxAttempts, values: [2] }
`;

interface LabPointJson {
  sweep: string;
  point: number;
  factors: Record<string, string | number>;
  offeredPerS: number;
  triggerS: number;
  verdict: string;
  model: string | null;
  agree: boolean | null;
}

/** A one-line error, no stack trace. */
function assertRefused(r: { code: number | null; stderr: string }, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.doesNotMatch(r.stderr, /internal error/);
}

test('model --over: a lab sweep drawn over the simulated map (table, model.json, csv and figure), and its refusals', async () => {
  const dir = tempDir('model-over');
  writeFileSync(join(dir, 'over-small.yaml'), EXPERIMENT);
  writeFileSync(join(dir, 'grid.sweep.yaml'), GRID);
  writeFileSync(join(dir, 'rate.sweep.yaml'), RATE);
  writeFileSync(join(dir, 'attempts.sweep.yaml'), ATTEMPTS);
  const env = { METABENCH_STATE_DIR: join(dir, 'state') };
  const sweep = async (name: string): Promise<string> => {
    const out = join(dir, name);
    const r = await runCli(
      ['sweep', '--any-scale', join(dir, `${name}.sweep.yaml`), '--runtime', 'sim', '--out', out, '--quiet'],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    return out;
  };
  const grid = await sweep('grid');
  const rate = await sweep('rate');
  const file = join(dir, 'over-small.yaml');
  const out = join(dir, 'model');
  const r = await runCli(['model', file, '--over', grid, '--over', rate, '--out', out, '--quiet'], env);
  assert.equal(r.code, 0, r.stderr);

  // The map at the lab's own loads (60% capacity = 240/s) and trigger durations (the rate
  // sweep's the file's 2 s); cells with a lab point read model / lab, the others the model alone.
  // A plain table on the terminal (no markdown): columns two spaces apart, a rule of dashes.
  const lines = r.stdout.split('\n');
  const head = lines.findIndex((l) => l.startsWith('trigger (s) \\ load (origins/s)'));
  assert.ok(head >= 0, r.stdout);
  assert.match(lines[head + 1]!, /^-+( +-+)+$/);
  const table = lines.slice(head + 2).filter((l) => /^\d/.test(l));
  assert.deepEqual(lines[head]!.split(/ {2,}/), [
    'trigger (s) \\ load (origins/s)',
    '100 (stable)',
    '200',
    '240',
    '300',
  ]);
  assert.doesNotMatch(r.stdout, /\*\*|\|/);
  const cells = (y: number): string[] =>
    table
      .find((l) => l.startsWith(`${y} `))!
      .split(/ {2,}/)
      .slice(1)
      .map((c) => c.trim());
  const both = /^(M|R|\?) \/ (M|R|\?)( ✗)?$/;
  const modelOnly = /^(M|R|\?)$/;
  for (const y of [4, 1]) {
    const [c100, c200, c240, c300] = cells(y);
    for (const c of [c100, c200, c240]) assert.match(c!, both, `trigger ${y} s: ${c}`);
    assert.match(c300!, modelOnly, `trigger ${y} s, 300/s: no lab point there`);
  }
  const [c100, c200, c240, c300] = cells(2);
  for (const c of [c100, c240, c300]) assert.match(c!, both, `trigger 2 s: ${c}`);
  assert.match(c200!, modelOnly);
  // Below the lower edge both recover; at 240/s after a 4 s pause both collapse.
  assert.equal(cells(4)[0], 'R / R');
  assert.equal(cells(4)[2], 'M / M');
  assert.match(r.stdout, /^lab vs model: 9 lab points; \d+ agrees?, \d+ disagrees?/m);

  const model = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as {
    scale: number;
    lab: {
      sweeps: { dir: string; name: string; factors: string[]; scale: number }[];
      agree: number;
      disagree: number;
      noCell: number;
      points: LabPointJson[];
    };
  };
  assert.equal(model.scale, 1);
  assert.deepEqual(
    model.lab.sweeps.map((s) => [s.dir, s.name, s.factors]),
    [
      [grid, 'over-grid', ['load.rate', 'schedule.trigger.duration']],
      [rate, 'over-rate', ['load.rate']],
    ],
  );
  const pts = model.lab.points;
  assert.equal(pts.length, 9);
  assert.equal(model.lab.noCell, 0);
  assert.equal(model.lab.agree + model.lab.disagree, pts.filter((p) => p.agree !== null).length);
  for (const p of pts) {
    assert.notEqual(p.model, null, `${p.sweep} point-${p.point} has a model cell`);
    assert.equal(
      p.agree,
      p.model === 'unmeasured' || p.verdict === 'unmeasured' ? null : p.model === p.verdict,
    );
    const summary = JSON.parse(
      readFileSync(join(p.sweep, `point-${p.point}`, 'run-1', 'summary.json'), 'utf8'),
    ) as { offeredPerS: number };
    assert.equal(p.offeredPerS, summary.offeredPerS);
  }
  const at = (sweepDir: string, factors: Record<string, string>) =>
    pts.find((p) => p.sweep === sweepDir && JSON.stringify(p.factors) === JSON.stringify(factors));
  const p240 = at(grid, { 'load.rate': '60% capacity', 'schedule.trigger.duration': '4s' });
  assert.deepEqual([p240?.offeredPerS, p240?.triggerS], [240, 4]);
  // The load-only sweep's points have the file's trigger, 2 s.
  assert.deepEqual(
    pts.filter((p) => p.sweep === rate).map((p) => [p.factors['load.rate'], p.offeredPerS, p.triggerS]),
    [
      ['60% capacity', 240, 2],
      ['100/s', 100, 2],
      ['300/s', 300, 2],
    ],
  );

  const labCsv = parse(readFileSync(join(out, 'lab.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(labCsv.length, 9);
  assert.ok(labCsv.every((row) => /^(metastable|recovered|unmeasured)$/.test(row['model verdict']!)));
  const mapCsv = parse(readFileSync(join(out, 'map.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(mapCsv.length, 12);
  assert.equal(mapCsv.filter((row) => row['lab verdict'] !== '').length, 9);

  const svg = readFileSync(join(out, 'figures', 'sweep-map.svg'), 'utf8');
  // The title is model.md's (the figure's caption and alt text), not drawn in the SVG.
  assert.doesNotMatch(svg, /the lab over the model/);
  assert.match(svg, /lab vs model/);
  assert.equal((svg.match(/aria-roledescription="point"/g) ?? []).length, 9);
  assert.equal((svg.match(/aria-roledescription="rect mark"/g) ?? []).length, 12);
  const md = readFileSync(join(out, 'model.md'), 'utf8');
  assert.match(md, /### The lab over the map/);
  assert.match(md, /!\[Metastable region: the lab over the model\]\(figures\/sweep-map\.svg\)/);
  assert.match(md, /lab vs model: 9 lab points/);
  assert.ok(existsSync(join(out, 'figures', 'sweep-map.vl.json')));

  // With --ctmc, each lab point also gets the Markov model's prediction at its load and deadline.
  const withCtmc = join(dir, 'model-ctmc');
  const rc = await runCli(['model', file, '--over', rate, '--ctmc', '--out', withCtmc, '--quiet'], env);
  assert.equal(rc.code, 0, rc.stderr);
  const e = loadExperimentFile(file);
  const ctmcCsv = parse(readFileSync(join(withCtmc, 'lab.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(ctmcCsv.length, 3);
  for (const row of ctmcCsv) {
    const deadline = Number(row['recovery deadline (s)']);
    assert.equal(deadline, 3 * Number(row['trigger duration (s)']));
    const c = ctmcBeside(e, Number(row['offered load (origins/s)']), deadline);
    assert.equal(Number(row['CTMC mean recovery (s)']), c.recoveryS);
    assert.equal(Number(row['CTMC P(recovered within deadline)']), c.pRecoveredWithin);
  }
  assert.match(
    readFileSync(join(withCtmc, 'model.md'), 'utf8'),
    /### The lab points beside the Markov model/,
  );

  // Refusals: one line naming the folder (and file), exit 2, no stack trace.
  assertRefused(
    await runCli(['model', file, '--over', join(dir, 'nope'), '--quiet'], env),
    /^metabench: --over .*nope: no such folder$/m,
  );
  // A sweep's point is one experiment's results folder: read as a single lab point, and
  // refused because its experiment is FILE moved in load.rate and the trigger's duration.
  assertRefused(
    await runCli(['model', file, '--over', join(grid, 'point-1'), '--quiet'], env),
    /^metabench: .*point-1\/run-1\/manifest\.json: the run's experiment differs from .*over-small\.yaml in load\.rate\..*schedule\.triggers\.0\.duration$/m,
  );
  assertRefused(
    await runCli(['model', 'experiments/retry-storm.yaml', '--over', grid, '--quiet'], env),
    /^metabench: .*grid\/point-1: ran experiment over-small \(.*over-small\.yaml\), not retry-storm \(experiments\/retry-storm\.yaml\)$/m,
  );
  assertRefused(
    await runCli(['model', file, '--over', grid, '--set', 'client.timeout=300ms', '--quiet'], env),
    /^metabench: .*grid\/point-1\/run-1\/manifest\.json: the point's experiment differs from .*over-small\.yaml with --set client\.timeout=300ms in client\.timeout$/m,
  );
  const attempts = await sweep('attempts');
  assertRefused(
    await runCli(['model', file, '--over', attempts, '--quiet'], env),
    /^metabench: .*attempts\/sweep\.json: the sweep varies client\.retry\.maxAttempts; a sweep drawn over the model map may vary only load\.rate and schedule\.trigger\.duration$/m,
  );
  assertRefused(
    await runCli(['model', file, '--over', grid, '--no-map', '--quiet'], env),
    /--over draws a lab sweep over the simulated map: it cannot go with --no-map/,
  );
});
