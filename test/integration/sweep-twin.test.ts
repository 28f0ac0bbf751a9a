import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { runCli, tempDir } from '../helpers/cli.js';

// Issue 9's model vs bench for sweeps: `metabench sweep --twin` simulates every lab point
// (same experiment, seed and scale) into point-<k>/twin/; each point's report shows both,
// and the sweep table gives both verdicts. A short, small experiment keeps it ~30 s.
const EXPERIMENT = `name: twin-small
lab: { api: { workers: 4, work: { dist: exponential, mean: 10ms } } }
load: { rate: 50% capacity }
client: { timeout: 300ms, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 3s, trigger: { kind: pause, target: api, duration: 1s }, observe: 5s }
recovery: { within: 3x, tolerance: 20%, window: 1s, hold: 1s }
`;
const SWEEP = `name: twin-sweep
experiment: twin-small.yaml
factors:
  - { path: load.rate, values: [30% capacity] }
`;

test('sweep --twin: each lab point has its simulated twin, its report both side by side, and the table both verdicts', async () => {
  const dir = tempDir('sweep-twin');
  writeFileSync(join(dir, 'twin-small.yaml'), EXPERIMENT);
  writeFileSync(join(dir, 'twin.sweep.yaml'), SWEEP);
  const out = join(dir, 'out');
  const r = await runCli(['sweep', join(dir, 'twin.sweep.yaml'), '--twin', '--out', out, '--quiet'], {
    METABENCH_STATE_DIR: join(dir, 'state'),
  });
  assert.equal(r.code, 0, r.stderr);
  for (const k of [1, 2]) {
    const point = join(out, `point-${k}`);
    const twin = JSON.parse(readFileSync(join(point, 'twin', 'run-1', 'summary.json'), 'utf8')) as {
      runtime: string;
    };
    assert.equal(twin.runtime, 'sim');
    const lab = JSON.parse(readFileSync(join(point, 'run-1', 'summary.json'), 'utf8')) as { runtime: string };
    assert.equal(lab.runtime, 'local');
    assert.match(readFileSync(join(point, 'report.md'), 'utf8'), /## Model vs bench/);
  }
  const rows = parse(readFileSync(join(out, 'sweep.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(rows.length, 2);
  for (const row of rows) {
    assert.match(row['verdict']!, /^(metastable|recovered|unmeasured)$/);
    assert.match(row['verdict (simulated)']!, /^(metastable|recovered|unmeasured)$/);
  }
  assert.ok(existsSync(join(out, 'sweep.md')));

  const bad = await runCli([
    'sweep',
    join(dir, 'twin.sweep.yaml'),
    '--twin',
    '--runtime',
    'sim',
    '--dry-run',
  ]);
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--twin simulates a lab sweep/);
});
