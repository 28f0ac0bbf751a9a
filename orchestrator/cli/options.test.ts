import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EVENTS_MODES } from './options.js';
import { EVENTS_MODES as LOG_MODES } from '../../bench/record/eventLog.js';

test('--events takes the event log modes eventLog.ts writes, no more, no fewer', () => {
  assert.deepEqual([...EVENTS_MODES], [...LOG_MODES]);
});
