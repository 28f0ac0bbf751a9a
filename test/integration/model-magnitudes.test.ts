import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { REPO, runCli, tempDir } from '../helpers/cli.js';

// Issue 35, point 4: `metabench model FILE --magnitudes LIST` maps offered load × the trigger's
// magnitude, with the fluid model's predicted boundary. The fixture is retry-storm with a 10 s
// 3x slowdown; at --scale 0.5 (a 5 s trigger) the map runs in simulation in seconds.
const FIXTURE = join(REPO, 'test/fixtures/experiments/storm-slowdown.yaml');

/** A one-line usage error, no stack trace. */
function assertRefused(r: { code: number | null; stderr: string }, message: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, message);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
  assert.doesNotMatch(r.stderr, /internal error/);
}

test('model --magnitudes: the map over the slowdown factor with the predicted boundary (table, model.md, model.json, map.csv, figure)', async () => {
  const out = join(tempDir('model-magnitudes'), 'model');
  const r = await runCli([
    'model',
    FIXTURE,
    '--magnitudes',
    '1.3x,2x,3x',
    '--rates',
    '200/s,280/s',
    '--scale',
    '0.5',
    '--jobs',
    '2',
    '--out',
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /simulating 2 loads × 3 slowdown factors \(trigger 5 s\)/);
  assert.match(r.stderr, /point 6\/6: offered load \d+\/s, slowdown factor [\d.]+ →/);
  const lines = r.stdout.split('\n');
  const head = lines.findIndex((l) => l.startsWith('slowdown factor (x) \\ load (origins/s)'));
  assert.ok(head >= 0, r.stdout);
  assert.deepEqual(lines[head]!.split(/ {2,}/), ['slowdown factor (x) \\ load (origins/s)', '200', '280']);
  const row = (k: string): string[] =>
    lines
      .find((l) => l.startsWith(`${k} `))!
      .split(/ {2,}/)
      .slice(1);
  // Simulated and predicted agree at these cells (the boundary: 2.21x at 200/s, 1.57x at 280/s).
  assert.deepEqual(row('3'), ['M', 'M']);
  assert.deepEqual(row('2'), ['R', 'M']);
  assert.deepEqual(row('1.3'), ['R', 'R']);
  assert.match(r.stdout, /^predicted boundary \(fluid model, trigger 5 s\):$/m);
  assert.match(r.stdout, /^- 200 origins\/s: tips from 2\.2\d*x$/m);
  assert.match(r.stdout, /^- 280 origins\/s: tips from 1\.57\d*x$/m);

  const md = readFileSync(join(out, 'model.md'), 'utf8');
  assert.match(md, /Over the trigger's magnitude: slowdown factor \(x\) varied/);
  assert.match(md, /backlog left at the trigger’s end is at least cμ·τ/);
  assert.match(md, /\| slowdown factor \(x\) \\ load \(origins\/s\) \| 200 \| 280 \|/);
  assert.match(md, /- 280 origins\/s: tips from 1\.57/);

  const json = JSON.parse(readFileSync(join(out, 'model.json'), 'utf8')) as {
    map: {
      factors: { name: string; unit: string }[];
      rows: { factors: Record<string, number>; verdict: string }[];
    };
    magnitudes: {
      kind: string;
      field: string;
      durationS: number;
      loads: { load: number; boundary: number }[];
    };
  };
  assert.deepEqual(json.map.factors, [
    { name: 'offered load', unit: 'origins/s' },
    { name: 'slowdown factor', unit: 'x' },
  ]);
  assert.equal(json.map.rows.length, 6);
  assert.equal(json.magnitudes.kind, 'slowdown');
  assert.equal(json.magnitudes.durationS, 5);
  assert.deepEqual(
    json.magnitudes.loads.map((l) => l.load),
    [200, 280],
  );

  const csv = parse(readFileSync(join(out, 'map.csv'), 'utf8'), { columns: true }) as Record<
    string,
    string
  >[];
  assert.equal(csv.length, 6);
  for (const c of csv) {
    assert.ok(['1.3', '2', '3'].includes(c['slowdown factor (x)']!), JSON.stringify(c));
    assert.match(c['model verdict']!, /^(metastable|recovered)$/);
  }

  // The figure: the cells, and the boundary as a dashed step line along the cell edges where
  // the prediction changes (3x over 2x at 200/s, 2x over 1.3x at 280/s, and the riser between).
  const spec = JSON.parse(readFileSync(join(out, 'figures/sweep-map.vl.json'), 'utf8')) as {
    data: { values: { layer?: string; x: number; y: number }[] };
    layer: { mark: { strokeDash?: number[] } }[];
  };
  const edges = spec.data.values
    .filter((v) => v.layer?.startsWith('boundary'))
    .map((v) => [v.layer, v.x, v.y].join(' '));
  assert.deepEqual(edges.sort(), ['boundary-h 200 3', 'boundary-h 280 2', 'boundary-v 200 2']);
  assert.equal(spec.layer.filter((l) => l.mark.strokeDash).length, 2);
  const svg = readFileSync(join(out, 'figures/sweep-map.svg'), 'utf8');
  assert.equal(svg.match(/stroke-dasharray="6,3"/g)?.length, 3);
  assert.match(md, /Dashed line: the fluid model's predicted boundary \(200\/s: 2\.2\d*, 280\/s: 1\.57\d*\)/);
});

test('model --magnitudes refuses: a trigger with no magnitude, a value its kind refuses, two second axes, --over, --no-map', async () => {
  const pause = join(REPO, 'experiments/retry-storm.yaml');
  assertRefused(
    await runCli(['model', pause, '--magnitudes', '2x']),
    /--magnitudes: .*retry-storm\.yaml's trigger is a pause, which has no magnitude to vary/,
  );
  assertRefused(
    await runCli(['model', FIXTURE, '--magnitudes', '2x,0.5x']),
    /--magnitudes: "0\.5x" is not a slowdown factor: must be above 1x/,
  );
  // The kind's own checks against the lab: a pool as large as the api's is no loss of capacity.
  assertRefused(
    await runCli([
      'model',
      FIXTURE,
      '--set',
      'schedule.trigger={kind: workers, to: 4, duration: 10s}',
      '--magnitudes',
      '4,8',
    ]),
    /--magnitudes: "8" is not a workers to: must be below lab\.api\.workers \(8\)/,
  );
  assertRefused(
    await runCli(['model', FIXTURE, '--magnitudes', '2x', '--durations', '1s']),
    /--magnitudes and --durations are both the map’s second axis/,
  );
  assertRefused(
    await runCli(['model', FIXTURE, '--magnitudes', '2x', '--over', tempDir('none')]),
    /--over .* cannot go with --magnitudes/,
  );
  assertRefused(
    await runCli(['model', FIXTURE, '--magnitudes', '2x', '--no-map']),
    /cannot go with --no-map/,
  );
  // cpu-limit has a magnitude (cpus) but the simulation cannot apply it: refused before any cell
  // runs, with the runtime's words, exit 3 (a spec error) and no stack trace.
  const cpu = await runCli([
    'model',
    FIXTURE,
    '--set',
    'schedule.trigger={kind: cpu-limit, target: api, cpus: 0.5, duration: 10s}',
    '--magnitudes',
    '0.5,0.25',
  ]);
  assert.equal(cpu.code, 3, cpu.stderr);
  assert.match(cpu.stderr, /schedule\.trigger\.kind: the sim runtime cannot apply a cpu-limit trigger/);
  assert.doesNotMatch(cpu.stderr, /\n\s+at /);
});
