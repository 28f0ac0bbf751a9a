import { test } from 'node:test';
import assert from 'node:assert/strict';
import { overridesHash, runLabel } from './naming.js';

test('a results folder is labelled by runtime and scale, and by a hash of the --set list when there is one', () => {
  assert.equal(runLabel({ runtime: 'sim', scale: 0.34 }), 'sim-s0.34');
  assert.equal(runLabel({ runtime: 'local', scale: 1, overrides: [] }), 'local-s1');
  const one = runLabel({ runtime: 'local', scale: 1, overrides: ['load.rate=40/s'] });
  assert.match(one, /^local-s1-set[0-9a-f]{4}$/);
  assert.equal(one, `local-s1-set${overridesHash(['load.rate=40/s'])}`);
});

test('the overrides hash tells different --set lists apart, and is the same for the same list', () => {
  const a = overridesHash(['load.rate=40/s', 'client.retry.maxAttempts=4']);
  assert.equal(a, overridesHash(['load.rate=40/s', 'client.retry.maxAttempts=4']));
  assert.notEqual(a, overridesHash(['client.retry.maxAttempts=4', 'load.rate=40/s']));
  assert.notEqual(a, overridesHash(['load.rate=41/s', 'client.retry.maxAttempts=4']));
});
