import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { gunzipSync, gzipSync } from 'node:zlib';
import { create } from 'tar';
import { CLI, REPO, runCli, tempDir } from '../helpers/cli.js';

// `metabench export bundle` and `metabench run --from-bundle`: a simulated run, bundled,
// re-run from the bundle alone, gives the same summary.json (simulation is deterministic,
// in virtual time, so this takes seconds and needs no lab lock).

/**
 * Fields of summary.json that are by nature per-run: none so far (it records no time of day
 * and no path). A field that starts to differ fails the test until it is named here, with why.
 */
const PER_RUN: readonly string[] = [];

function summary(file: string): Record<string, unknown> {
  const s = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  for (const f of PER_RUN) delete s[f];
  return s;
}

/** The entries of a .tar.gz (ustar headers: name at 0..100, size in octal at 124..136). */
function tarEntries(file: string): Map<string, Buffer> {
  const tar = gunzipSync(readFileSync(file));
  const out = new Map<string, Buffer>();
  for (let at = 0; at + 512 <= tar.length;) {
    const name = tar
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '');
    if (!name) break;
    const size = parseInt(
      tar
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .trim() || '0',
      8,
    );
    out.set(name, tar.subarray(at + 512, at + 512 + size));
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

test('a simulated run, bundled and re-run with --from-bundle, writes the same summary.json', async () => {
  const dir = tempDir('bundle');
  const original = join(dir, 'original');
  const run = await runCli([
    'run',
    'experiments/retry-storm.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--any-scale',
    '--seed',
    '7',
    '--out',
    original,
    '--quiet',
  ]);
  // retry-storm is metastable: the verdict is the run's own business here, not an error.
  assert.ok(run.code === 0 || run.code === 10, run.stderr);

  const file = join(dir, 'retry-storm.tar.gz');
  const b = await runCli(['export', 'bundle', original, '--out', file]);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout.trim(), file);

  const entries = tarEntries(file);
  for (const name of [
    'bundle/BUNDLE.json',
    'bundle/REPRODUCE.md',
    'bundle/experiment.json',
    'bundle/source/retry-storm.yaml',
    'bundle/results/summary.json',
    'bundle/results/run-1/manifest.json',
    'bundle/results/run-1/summary.json',
  ])
    assert.ok(entries.has(name), `the bundle holds ${name}`);
  const manifest = JSON.parse(readFileSync(join(original, 'run-1', 'manifest.json'), 'utf8')) as {
    experiment: unknown;
    gitRevision: string | null;
    metabench: string;
  };
  // The experiment as run: --seed 7 is in it, not the file's 42.
  assert.deepEqual(JSON.parse(entries.get('bundle/experiment.json')!.toString()), manifest.experiment);
  assert.equal((manifest.experiment as { seed: number }).seed, 7);
  const info = JSON.parse(entries.get('bundle/BUNDLE.json')!.toString()) as Record<string, unknown>;
  assert.equal(info.runtime, 'sim');
  assert.equal(info.scale, 0.1);
  assert.equal(info.seed, 7);
  assert.equal(info.repeat, 1);
  assert.deepEqual(info.ranWith, {
    metabench: manifest.metabench,
    gitRevision: manifest.gitRevision,
    node: process.version,
  });
  const lock = (info.exportedWith as { packageLockSha256: string }).packageLockSha256;
  assert.match(lock, /^[0-9a-f]{64}$/);
  assert.equal(
    entries.get('bundle/source/retry-storm.yaml')!.toString(),
    readFileSync('experiments/retry-storm.yaml', 'utf8'),
  );
  const reproduce = entries.get('bundle/REPRODUCE.md')!.toString();
  assert.match(reproduce, /metabench run --from-bundle retry-storm\.tar\.gz --out reproduced/);
  assert.match(reproduce, /runtime: sim/);
  assert.match(reproduce, /scale: 0\.1/);
  assert.match(reproduce, /seed: 7; repetitions: 1/);
  assert.ok(reproduce.includes(lock), 'REPRODUCE.md names package-lock.json’s hash');

  const again = join(dir, 'again');
  const r = await runCli(['run', '--from-bundle', file, '--out', again, '--quiet']);
  assert.equal(r.code, run.code, r.stderr);
  assert.deepEqual(summary(join(again, 'summary.json')), summary(join(original, 'summary.json')));
  assert.deepEqual(
    summary(join(again, 'run-1', 'summary.json')),
    summary(join(original, 'run-1', 'summary.json')),
  );
  const reran = JSON.parse(readFileSync(join(again, 'run-1', 'manifest.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  assert.equal(reran.fromBundle, file);
  assert.equal(reran.scale, 0.1);
  assert.equal(reran.runtime, 'sim');

  // The line it prints compares the re-run with the bundled original, as a shell runs it.
  const line = /^compare with the bundled run: (.+)$/m.exec(r.stderr)?.[1];
  assert.ok(line, r.stderr);
  assert.ok(line.endsWith(`metabench compare ${again}-bundled/bundle/results ${again}`), line);
  const sh = spawnSync(
    'sh',
    ['-c', line.replace('metabench compare', `"${process.execPath}" "${CLI}" compare`)],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(sh.status, 0, sh.stderr);
  const compared = sh.stdout.trim();
  assert.equal(compared, join(`${again}-bundled`, 'bundle', 'compare-results-vs-again'));
  assert.match(readFileSync(join(compared, 'compare.md'), 'utf8'), /\| folder \| results \| again \|/);
});

test('--from-bundle takes the bundle’s runtime, scale, seed and repetitions; the flags given override them', async () => {
  const dir = tempDir('bundle-flags');
  const original = join(dir, 'original');
  const run = await runCli([
    'run',
    'experiments/retry-storm.yaml',
    '--runtime',
    'sim',
    '--scale',
    '0.1',
    '--any-scale',
    '--out',
    original,
    '--quiet',
  ]);
  assert.ok(run.code === 0 || run.code === 10, run.stderr);
  const file = join(dir, 'b.tar.gz');
  assert.equal((await runCli(['export', 'bundle', original, '--out', file])).code, 0);
  const plan = await runCli(['run', '--from-bundle', file, '--dry-run']);
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /plan of run 1 of 1 \(seed 42, scale 0\.1, runtime sim\)/);
  const over = await runCli([
    'run',
    '--from-bundle',
    file,
    '--dry-run',
    '--scale',
    '0.05',
    '--any-scale',
    '--seed',
    '3',
    '--repeat',
    '2',
    '--runtime',
    'local',
  ]);
  assert.equal(over.code, 0, over.stderr);
  assert.match(over.stdout, /plan of run 1 of 2 \(seed 3, scale 0\.05, runtime local\)/);
  const set = await runCli(['run', '--from-bundle', file, '--dry-run', '--set', 'seed=1']);
  assert.equal(set.code, 2);
  assert.match(set.stderr, /--set goes with an experiment file/);
});

test('a missing, corrupt or foreign bundle is a clear error naming it: exit 2, no stack trace', async () => {
  const dir = tempDir('bad-bundle');
  const garbage = join(dir, 'garbage.tar.gz');
  writeFileSync(garbage, 'this is not a bundle\n');
  const truncated = join(dir, 'truncated.tar.gz');
  writeFileSync(truncated, gzipSync(Buffer.alloc(4096, 7)).subarray(0, 40));
  const foreign = join(dir, 'foreign.tar.gz');
  // A good .tar.gz of something else: no BUNDLE.json.
  writeFileSync(join(dir, 'notes.txt'), 'not a bundle\n');
  await create({ gzip: true, file: foreign, cwd: dir }, ['notes.txt']);
  const cases: [string[], RegExp][] = [
    [['run', '--from-bundle', join(dir, 'nope.tar.gz')], /nope\.tar\.gz: no such file/],
    [['run', '--from-bundle', garbage], /garbage\.tar\.gz: not a readable \.tar\.gz/],
    [['run', '--from-bundle', truncated], /truncated\.tar\.gz: not a readable \.tar\.gz/],
    [
      ['run', '--from-bundle', foreign],
      /foreign\.tar\.gz: not a metabench bundle \(no bundle\/BUNDLE\.json\)/,
    ],
    [['run', 'experiments/retry-storm.yaml', '--from-bundle', garbage], /not both/],
    [['sweep', '--from-bundle', garbage], /garbage\.tar\.gz: not a readable \.tar\.gz/],
    [['sweep', '--from-bundle', foreign], /foreign\.tar\.gz: not a metabench bundle/],
    [['export', 'bundle', dir], /not an experiment's results folder \(no run-1\/manifest\.json/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(args);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /\n\s+at |internal error/);
  }
});

test('a simulated sweep, bundled and re-run with sweep --from-bundle, writes the same summary.json in every point', async () => {
  const dir = tempDir('bundle-sweep');
  const sweepFile = join(dir, 'rates.sweep.yaml');
  // Two points, one run each, both well below capacity: no retry storm to simulate, so seconds.
  writeFileSync(
    sweepFile,
    [
      'name: bundle-check',
      `experiment: ${JSON.stringify(join(REPO, 'experiments', 'retry-storm.yaml'))}`,
      'design: factorial',
      'factors:',
      '  - { path: load.rate, values: [20% capacity, 30% capacity] }',
      'repeat: 1',
      'runtime: sim',
      '',
    ].join('\n'),
  );
  const original = join(dir, 'original');
  const s = await runCli([
    'sweep',
    sweepFile,
    '--scale',
    '0.1',
    '--any-scale',
    '--out',
    original,
    '--jobs',
    '1',
    '--quiet',
  ]);
  assert.equal(s.code, 0, s.stderr);

  const file = join(dir, 'sweep.tar.gz');
  const b = await runCli(['export', 'bundle', original, '--out', file]);
  assert.equal(b.code, 0, b.stderr);
  assert.equal(b.stdout.trim(), file);
  const entries = tarEntries(file);
  const points = [1, 2];
  for (const name of [
    'bundle/BUNDLE.json',
    'bundle/REPRODUCE.md',
    'bundle/sweep-plan.json',
    'bundle/source/rates.sweep.yaml',
    'bundle/source/retry-storm.yaml',
    'bundle/results/sweep.json',
    ...points.flatMap((k) => [
      `bundle/experiments/point-${k}.json`,
      `bundle/results/point-${k}/summary.json`,
      `bundle/results/point-${k}/run-1/manifest.json`,
      `bundle/results/point-${k}/run-1/summary.json`,
    ]),
  ])
    assert.ok(entries.has(name), `the bundle holds ${name}`);
  for (const k of points) {
    const m = JSON.parse(readFileSync(join(original, `point-${k}`, 'run-1', 'manifest.json'), 'utf8')) as {
      experiment: unknown;
    };
    assert.deepEqual(JSON.parse(entries.get(`bundle/experiments/point-${k}.json`)!.toString()), m.experiment);
  }
  assert.equal(entries.get('bundle/source/rates.sweep.yaml')!.toString(), readFileSync(sweepFile, 'utf8'));
  const info = JSON.parse(entries.get('bundle/BUNDLE.json')!.toString()) as Record<string, unknown>;
  assert.deepEqual(
    [info.kind, info.sweep, info.experiment, info.runtime, info.scale, info.repeat, info.points],
    ['sweep', 'bundle-check', 'retry-storm', 'sim', 0.1, 1, 2],
  );
  const reproduce = entries.get('bundle/REPRODUCE.md')!.toString();
  assert.match(reproduce, /metabench sweep --from-bundle sweep\.tar\.gz --out reproduced/);
  assert.match(reproduce, /runtime: sim/);
  assert.match(reproduce, /scale: 0\.1/);

  // The bundle's runtime, scale and repetitions, unless the flags say otherwise; no --set.
  const plan = await runCli(['sweep', '--from-bundle', file, '--dry-run']);
  assert.equal(plan.code, 0, plan.stderr);
  assert.match(plan.stdout, /^bundle-check: 2 points × 1 runs \(factorial, runtime sim\)$/m);
  const seconds = (out: string) => Number(/point 1: .* ≈ (\d+) s/.exec(out)?.[1]);
  const over = await runCli([
    'sweep',
    '--from-bundle',
    file,
    '--dry-run',
    '--repeat',
    '2',
    '--runtime',
    'local',
    '--scale',
    '1',
    '--any-scale',
  ]);
  assert.equal(over.code, 0, over.stderr);
  assert.match(over.stdout, /^bundle-check: 2 points × 2 runs \(factorial, runtime local\)$/m);
  // The bundle's own plan is simulated (its wall time is the simulator's); the flags' is two
  // lab runs of the unscaled schedule (280 s each).
  assert.match(plan.stdout, /wall time: simulated/);
  assert.ok(seconds(over.stdout) >= 2 * 280, `${plan.stdout}\n${over.stdout}`);
  const set = await runCli(['sweep', '--from-bundle', file, '--set', 'seed=1']);
  assert.equal(set.code, 2);
  assert.match(set.stderr, /--set goes with a sweep file/);

  // A sweep's bundle is not one experiment's.
  const wrong = await runCli(['run', '--from-bundle', file]);
  assert.equal(wrong.code, 2);
  assert.match(wrong.stderr, /the bundle of a sweep: re-run it with metabench sweep --from-bundle/);

  const again = join(dir, 'again');
  const r = await runCli(['sweep', '--from-bundle', file, '--out', again, '--jobs', '1', '--quiet']);
  assert.equal(r.code, 0, r.stderr);
  for (const k of points) {
    for (const f of ['summary.json', join('run-1', 'summary.json')])
      assert.deepEqual(
        summary(join(again, `point-${k}`, f)),
        summary(join(original, `point-${k}`, f)),
        `point-${k}/${f}`,
      );
    const reran = JSON.parse(
      readFileSync(join(again, `point-${k}`, 'run-1', 'manifest.json'), 'utf8'),
    ) as Record<string, unknown>;
    assert.equal(reran.fromBundle, file);
    assert.equal(reran.scale, 0.1);
    assert.equal(reran.runtime, 'sim');
  }
  assert.deepEqual(
    JSON.parse(readFileSync(join(again, 'sweep.json'), 'utf8')),
    JSON.parse(readFileSync(join(original, 'sweep.json'), 'utf8')),
  );

  // The line it prints compares each point with its bundled original, as a shell runs it.
  const line = /^compare with the bundled sweep: (.+)$/m.exec(r.stderr)?.[1];
  assert.ok(line, r.stderr);
  for (const k of points)
    assert.ok(
      line.includes(`metabench compare ${again}-bundled/bundle/results/point-${k} ${again}/point-${k}`),
      line,
    );
  const sh = spawnSync(
    'sh',
    ['-c', line.replaceAll('metabench compare', `"${process.execPath}" "${CLI}" compare`)],
    { encoding: 'utf8' },
  );
  assert.equal(sh.status, 0, sh.stderr);
  const compared = sh.stdout.trim().split('\n');
  assert.equal(compared.length, points.length);
  for (const c of compared)
    assert.match(readFileSync(join(c, 'compare.md'), 'utf8'), /\| differs in \| nothing: the same setup/);
});
