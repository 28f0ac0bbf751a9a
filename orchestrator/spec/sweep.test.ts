import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, tempDir } from '../../test/helpers/cli.js';
import { SpecError } from '../../foundation/errors.js';
import { parseSet } from '../../foundation/overrides.js';
import { loadSweepFile } from './sweep.js';

function sweepDir(sweep: string): string {
  const dir = tempDir('sweepspec');
  copyFileSync(join(REPO, 'experiments/retry-storm.yaml'), join(dir, 'retry-storm.yaml'));
  writeFileSync(join(dir, 's.yaml'), sweep);
  return join(dir, 's.yaml');
}

function issues(file: string): SpecError['issues'] {
  try {
    loadSweepFile(file);
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    return err.issues;
  }
  assert.fail('expected the sweep to be refused');
}

test('a sweep names its experiment relative to itself and takes the reference from it', () => {
  const f = sweepDir(
    'name: s\nexperiment: retry-storm.yaml\nfactors:\n  - { path: client.retry.maxAttempts, values: [1, 2, 4] }\n  - { path: load.rate, values: [50% capacity] }\n',
  );
  const s = loadSweepFile(f);
  assert.equal(s.sweep.design, 'one-at-a-time');
  assert.equal(s.sweep.runtime, 'local');
  assert.deepEqual(
    s.factors.map((x) => x.reference),
    [4, '70% capacity'],
  );
  assert.equal(s.points.length, 4);
  assert.deepEqual(
    s.experiments.map((e) => [e.client.retry.maxAttempts, e.load.rate]),
    [
      [4, { capacityFraction: 0.7 }],
      [1, { capacityFraction: 0.7 }],
      [2, { capacityFraction: 0.7 }],
      [4, { capacityFraction: 0.5 }],
    ],
  );
  // --set moves the reference point too.
  const set = parseSet('client.retry.maxAttempts=2');
  assert.ok(set.ok);
  assert.deepEqual(
    loadSweepFile(f, [set.value]).points.map((p) => p.values['client.retry.maxAttempts']),
    [2, 1, 4, 2],
  );
});

test('bad sweeps: unknown keys, bad factor values (all of them, once each), missing experiment', () => {
  const bad = issues(
    sweepDir(
      'name: s\nexperiment: retry-storm.yaml\ndesign: factorial\nfactors:\n  - { path: load.rate, values: [fast, 10/s, slow] }\n  - { path: client.timeout, values: [1s, 0ms] }\n',
    ),
  );
  const msgs = bad.map((i) => `${i.path}: ${i.message}`);
  assert.equal(bad.length, 3, msgs.join('\n'));
  assert.ok(msgs.some((m) => /load\.rate: "fast" is not a rate.*factor load\.rate="fast"/.test(m)));
  assert.ok(msgs.some((m) => /client\.timeout: must be greater than zero/.test(m)));

  const typo = issues(
    sweepDir('name: s\nexperiment: retry-storm.yaml\nfactor:\n  - { path: load.rate, values: [1/s] }\n'),
  );
  assert.ok(
    typo.some((i) => i.path === 'factor' && /did you mean "factors"/.test(i.message) && i.line === 3),
  );

  const missing = issues(
    sweepDir('name: s\nexperiment: nope.yaml\nfactors: [{ path: load.rate, values: [1/s] }]\n'),
  );
  assert.match(missing[0]!.message, /no such file/);

  const noRef = issues(
    sweepDir(
      'name: s\nexperiment: retry-storm.yaml\nfactors: [{ path: client.deadline, values: [1s, 2s] }]\n',
    ),
  );
  assert.match(noRef[0]!.message, /give the reference value/);
});

test("a trigger's magnitude as a factor: checked against the trigger's kind, each value refused at its line", () => {
  const dir = tempDir('sweepspec');
  copyFileSync(join(REPO, 'experiments/retry-storm.yaml'), join(dir, 'retry-storm.yaml'));
  copyFileSync(join(REPO, 'test/fixtures/experiments/storm-slowdown.yaml'), join(dir, 'storm-slowdown.yaml'));
  const write = (name: string, text: string): string => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const ok = loadSweepFile(
    write(
      'ok.yaml',
      'name: s\nexperiment: storm-slowdown.yaml\nfactors:\n  - { path: schedule.trigger.factor, values: [1.5x, 5x] }\n',
    ),
  );
  assert.deepEqual(
    ok.experiments.map((e) => (e.schedule.triggers[0] as { factor?: number }).factor),
    [3, 1.5, 5],
  );
  // A pause has no factor: said at the factor's path, with the kinds that have one.
  const pause = issues(
    write(
      'pause.yaml',
      'name: s\nexperiment: retry-storm.yaml\ndesign: factorial\nfactors:\n  - { path: schedule.trigger.factor, values: [2x] }\n',
    ),
  );
  assert.deepEqual(
    pause.map((i) => [i.line, i.path]),
    [[5, 'factors.0.path']],
  );
  assert.match(
    pause[0]!.message,
    /trigger is a pause, which has no factor .*factor is a field of slowdown, load-spike/,
  );
  // Each bad value at its own line (the values on lines of their own).
  const bad = issues(
    write(
      'bad.yaml',
      'name: s\nexperiment: storm-slowdown.yaml\nfactors:\n  - path: schedule.trigger.factor\n    values:\n      - 2x\n      - 0.5x\n      - fast\n',
    ),
  );
  assert.deepEqual(
    bad.map((i) => [i.file, i.line, i.path]),
    [
      [join(dir, 'bad.yaml'), 7, 'factors.0.values.1'],
      [join(dir, 'bad.yaml'), 8, 'factors.0.values.2'],
    ],
  );
  assert.match(bad[0]!.message, /"0\.5x" is not a slowdown factor: must be above 1x/);
  assert.match(bad[1]!.message, /"fast" is not a slowdown factor/);
  // The kind's checks against the lab too: a pool as large as the api's (the trigger made a
  // workers one by --set).
  const set = parseSet('schedule.trigger={kind: workers, to: 4, duration: 10s}');
  assert.ok(set.ok);
  const pool = write(
    'pool.yaml',
    'name: s\nexperiment: storm-slowdown.yaml\nfactors:\n  - { path: schedule.trigger.to, values: [2, 8] }\n',
  );
  try {
    loadSweepFile(pool, [set.value]);
    assert.fail('expected the sweep to be refused');
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    assert.deepEqual(
      err.issues.map((i) => [i.line, i.path]),
      [[4, 'factors.0.values.1']],
    );
    assert.match(err.issues[0]!.message, /8 is not a workers to: must be below lab\.api\.workers \(8\)/);
  }
  // cpu-limit's cpus, likewise.
  const cpuSet = parseSet('schedule.trigger={kind: cpu-limit, target: api, cpus: 1, duration: 10s}');
  assert.ok(cpuSet.ok);
  const cpusOk = write(
    'cpus-ok.yaml',
    'name: s\nexperiment: storm-slowdown.yaml\ndesign: factorial\nfactors:\n  - { path: schedule.trigger.cpus, values: [0.5, 2] }\n',
  );
  assert.deepEqual(
    loadSweepFile(cpusOk, [cpuSet.value]).experiments.map(
      (e) => (e.schedule.triggers[0] as { cpus?: number }).cpus,
    ),
    [0.5, 2],
  );
  const cpus = write(
    'cpus.yaml',
    'name: s\nexperiment: storm-slowdown.yaml\nfactors:\n  - { path: schedule.trigger.cpus, values: [0.5, -1] }\n',
  );
  try {
    loadSweepFile(cpus, [cpuSet.value]);
    assert.fail('expected the sweep to be refused');
  } catch (err) {
    assert.ok(err instanceof SpecError, String(err));
    assert.deepEqual(
      err.issues.map((i) => [i.line, i.path]),
      [[4, 'factors.0.values.1']],
    );
    assert.match(err.issues[0]!.message, /-1 is not a cpu-limit cpus/);
  }
});
