import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode } from '../../foundation/exitCodes.js';
import { RUNTIMES, parseRuntime } from '../lab/runtimes.js';
import { DEFAULT_METRICS_PORT as OBSERVERS_METRICS_PORT } from '../live/observers.js';
import { DEFAULT_METRICS_PORT } from './runtimeOption.js';
import { REPO, runCli, tempDir } from '../../test/helpers/cli.js';

test('the runtime is an enum; anything else is refused', () => {
  assert.deepEqual([...RUNTIMES], ['local', 'docker', 'sim', 'swarm']);
  assert.equal(parseRuntime('local'), 'local');
  assert.throws(
    () => parseRuntime('mars'),
    /--runtime takes one of local, docker, sim, swarm \(got "mars"\)/,
  );
});

test("the options' default /metrics port is the observers' own", () => {
  assert.equal(DEFAULT_METRICS_PORT, OBSERVERS_METRICS_PORT);
});

test('--runtime on run, sweep and calibrate: validated (exit 2), and shown by --dry-run', async () => {
  const state = tempDir('runtime-state');
  const env = { METABENCH_STATE_DIR: state };
  // An env file of image overrides, as scripts/build-offline-images.sh writes docker/offline.env.
  const envFile = join(state, 'images.env');
  writeFileSync(envFile, 'METABENCH_API_IMAGE=metabench-offline/api:dev\n');
  for (const cmd of [
    ['run', 'experiments/retry-storm.yaml'],
    ['sweep', 'experiments/retry-storm-rate.sweep.yaml'],
    ['calibrate', 'experiments/retry-storm.yaml'],
  ]) {
    const bad = await runCli([...cmd, '--runtime', 'mars', '--dry-run'], env);
    assert.equal(bad.code, ExitCode.usage, `${cmd[0]}: ${bad.stderr}`);
    assert.match(
      bad.stderr,
      /--runtime takes one of local, docker, sim, swarm \(got "mars"\)|'mars' is invalid\. Allowed choices are local, docker, sim, swarm/,
    );
    const ok = await runCli([...cmd, '--runtime', 'local', '--dry-run'], env);
    assert.equal(ok.code, 0, `${cmd[0]}: ${ok.stderr}`);
    assert.match(ok.stdout, /runtime local|local lab/);
    // The Docker runtimes' stack and images: the same flags on run, sweep and calibrate.
    const swarm = await runCli(
      [...cmd, '--runtime', 'swarm', '--project', 'lab2', '--env-file', envFile, '--dry-run'],
      env,
    );
    assert.equal(swarm.code, 0, `${cmd[0]}: ${swarm.stderr}`);
    assert.match(swarm.stdout, /runtime swarm|swarm lab/);
  }
});

test('a sweep file may say runtime: local; another runtime is a validation error', async () => {
  const dir = tempDir('runtime-sweep');
  const sweep = (runtime: string) =>
    [
      'name: s',
      `experiment: ${join(REPO, 'experiments/retry-storm.yaml')}`,
      'factors:',
      '  - { path: load.rate, values: [50% capacity] }',
      `runtime: ${runtime}`,
    ].join('\n');
  writeFileSync(join(dir, 'ok.yaml'), sweep('local'));
  writeFileSync(join(dir, 'bad.yaml'), sweep('mars'));
  const ok = await runCli(['validate', join(dir, 'ok.yaml')]);
  assert.equal(ok.code, 0, ok.stderr);
  const bad = await runCli(['validate', join(dir, 'bad.yaml')]);
  assert.equal(bad.code, ExitCode.invalidSpec);
  assert.match(bad.stderr, /bad\.yaml:5:\d+: runtime: .*"local"/);
});

test('calibrate --dry-run prints the step ladder, the rule and where the capacity would be stored', async () => {
  const state = tempDir('calibrate-dry');
  const r = await runCli(
    [
      'calibrate',
      'experiments/retry-storm.yaml',
      '--dry-run',
      '--steps',
      '100/s,50%,300/s',
      '--step-duration',
      '10s',
    ],
    { METABENCH_STATE_DIR: state },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /steps: 100\/s, 200\/s, 300\/s/); // 50% of the nominal 400/s
  assert.match(r.stdout, /each 10s, the first 5s not measured/);
  assert.match(r.stdout, /goodput >= 95% of offered and p99 <= 10 x the lowest step's p99/);
  assert.ok(r.stdout.includes(join(state, 'calibrations')), r.stdout);
  const bad = await runCli(['calibrate', 'experiments/retry-storm.yaml', '--steps', '100/s', '--dry-run']);
  assert.equal(bad.code, ExitCode.usage);
  assert.match(bad.stderr, /at least two rates/);
});
