import { test } from 'node:test';
import assert from 'node:assert/strict';
import { selfTime } from './cpuProfile.js';

test('a CPU profile is summed into self time by file and by function, the largest first', () => {
  const frame = (functionName: string, url: string, lineNumber: number) => ({
    functionName,
    url,
    lineNumber,
  });
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)', '', -1) },
      { id: 2, callFrame: frame('write', 'file:///w/dist/orchestrator/results/eventLog.js', 9) },
      { id: 3, callFrame: frame('', 'file:///w/dist/orchestrator/results/eventLog.js', 40) },
      { id: 4, callFrame: frame('fire', 'file:///w/node_modules/hdr-histogram-js/dist/x.js', 2) },
      { id: 5, callFrame: frame('(garbage collector)', '', -1) },
    ],
    samples: [2, 3, 2, 4, 5, 5, 1],
    timeDeltas: [1000, 2000, 1000, 500, 3000, 250, 250],
  };
  const t = selfTime(profile, 3);
  assert.equal(t.totalMs, 8);
  assert.deepEqual(t.byFile, [
    ['orchestrator/results/eventLog.js', 4],
    ['(native)', 3.5],
    ['node_modules/hdr-histogram-js/dist/x.js', 0.5],
  ]);
  assert.deepEqual(t.byFunction, [
    ['(garbage collector) (native)', 3.25],
    ['(anonymous) orchestrator/results/eventLog.js:41', 2],
    ['write orchestrator/results/eventLog.js:10', 2],
  ]);
});
