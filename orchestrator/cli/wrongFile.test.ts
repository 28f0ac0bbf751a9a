import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runCli } from '../../test/helpers/cli.js';

// Issue 33: a sweep file given to `run` listed nine schema errors, and a missing file said
// "cannot read the file (ENOENT)". Each is one line saying what happened and what to type.

test('run on a sweep file says it is a sweep file and names the command, exit 3, no stack trace', async () => {
  const r = await runCli(['run', 'experiments/retry-storm-rate.sweep.yaml']);
  assert.equal(r.code, 3, r.stderr);
  assert.match(
    r.stderr,
    /this is a sweep file .*use `metabench sweep experiments\/retry-storm-rate\.sweep\.yaml`/,
  );
  assert.match(r.stderr, /^1 problem found$/m);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('sweep on an experiment file names run instead, exit 3', async () => {
  const r = await runCli(['sweep', 'experiments/retry-storm.yaml', '--dry-run']);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /this is an experiment file: use `metabench run experiments\/retry-storm\.yaml`/);
  assert.doesNotMatch(r.stderr, /\n\s+at /);
});

test('a missing experiment file says "no such file" and names the nearest files, its folder’s and the catalogue’s, exit 3', async () => {
  const typo = await runCli(['run', 'experiments/retry-strom.yaml', '--dry-run']);
  assert.equal(typo.code, 3, typo.stderr);
  assert.match(
    typo.stderr,
    /experiments\/retry-strom\.yaml: no such file; nearest names: experiments\/retry-storm\.yaml/,
  );
  assert.doesNotMatch(typo.stderr, /ENOENT|\n\s+at /);
  // Run from the repository without the folder: the catalogue's name is offered.
  const bare = await runCli(['run', 'retry-storm.yaml', '--dry-run']);
  assert.equal(bare.code, 3, bare.stderr);
  assert.match(bare.stderr, /retry-storm\.yaml: no such file; nearest names: experiments\/retry-storm\.yaml/);
  // Nothing near: no list.
  const far = await runCli(['validate', 'experiments/zzzzzzzzzzzzzzzz.yaml']);
  assert.equal(far.code, 3, far.stderr);
  assert.match(far.stderr, /zzzzzzzzzzzzzzzz\.yaml: no such file\n/);
});
