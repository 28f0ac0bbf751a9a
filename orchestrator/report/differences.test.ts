import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../../test/helpers/cli.js';
import type { Manifest } from './load.js';
import { differences, sideNames } from './differences.js';

const manifest = (folder: string): Manifest =>
  JSON.parse(
    readFileSync(join(REPO, 'test/fixtures/results', folder, 'run-1/manifest.json'), 'utf8'),
  ) as Manifest;

test('two runs differ in the fields their resolved experiments set differently, names and repeat aside', () => {
  const storm = manifest('retry-storm-x1');
  const noRetry = manifest('retry-storm-no-retry-x2');
  const d = differences(storm, noRetry);
  assert.deepEqual(d, [
    { path: 'client.retry.policy', a: 'immediate', b: 'none' },
    { path: 'client.retry.maxAttempts', a: '4', b: '1' },
  ]);
  assert.deepEqual(sideNames(d), [
    'client.retry.policy=immediate, client.retry.maxAttempts=4',
    'client.retry.policy=none, client.retry.maxAttempts=1',
  ]);
  assert.deepEqual(differences(storm, storm), []);
  assert.equal(sideNames([]), null);
});

test('a field a --set or a sweep factor changed is named as written there; the runtime and scale count too', () => {
  const a = manifest('retry-storm-x1');
  const e = a.experiment;
  const b = {
    ...a,
    runtime: 'sim',
    experiment: {
      ...e,
      client: { ...e.client, timeout: 2000 },
      load: { ...e.load, rate: { capacityFraction: 0.2 } },
    },
    overrides: ['client.timeout=2s', 'load.rate="20% capacity"'],
  } as Manifest;
  const d = differences(a, b);
  assert.deepEqual(
    d.map((x) => [x.path, x.b]),
    [
      ['load.rate', '20% capacity'],
      ['client.timeout', '2s'],
      ['runtime', 'sim'],
    ],
  );
  // More than three: the first three, and how many more.
  const c = { ...b, scale: 1 } as Manifest;
  assert.match(
    sideNames(differences(a, c))![1],
    /^load\.rate=20% capacity, client\.timeout=2s, runtime=sim \(\+1 more\)$/,
  );
  // A field only one side has: the other is named by its absence.
  assert.deepEqual(sideNames([{ path: 'client.budget', a: '{"style":"aws"}', b: null }]), [
    'client.budget={"style":"aws"}',
    'without client.budget',
  ]);
});
