import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUsable } from './usable.js';

const complete = { offered: 100, recorded: 100, unsent: 0, interrupted: false, valid: true };

test('a complete, valid, uninterrupted run is usable', () => {
  assert.equal(isUsable(complete), true);
});

test('an invalid run is not usable, though every origin was recorded (it gets exit 11, no verdict)', () => {
  assert.equal(isUsable({ ...complete, valid: false }), false);
});

test('an interrupted run, a run with unrecorded or unsent origins, is not usable', () => {
  assert.equal(isUsable({ ...complete, interrupted: true }), false);
  assert.equal(isUsable({ ...complete, recorded: 98 }), false);
  assert.equal(isUsable({ ...complete, unsent: 1 }), false);
});
