import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunData } from './load.js';
import { machineLines } from './machine.js';
import type { MachineState, PriorityRecord } from '../results/machineState.js';

const state: MachineState = {
  cores: 2,
  start: { atS: null, load1: 1.52, load5: 0.98, stealPct: 0, busy: ['chromium', 'cc1plus', 'node'] },
  phases: {
    warmup: { atS: 6, load1: 1.7, load5: 1.01, stealPct: 2.5, busy: ['chromium'] },
    baseline: { atS: 18, load1: 1.9, load5: 1.1, stealPct: null, busy: [] },
  },
};
const priority: PriorityRecord = {
  generator: {
    requested: 'realtime',
    granted: 'nice -10',
    refused: 'SCHED_RR 1: Operation not permitted',
    threads: [1, 2],
  },
  lab: { niceness: 0 },
};

function run(index: number, machine: MachineState | undefined, p?: PriorityRecord): RunData {
  return {
    index,
    manifest: p ? { priority: p } : {},
    summary: machine ? { machine } : {},
  } as unknown as RunData;
}

test("the Machine section: each run's load at the start and each phase's end, steal, busy processes and priority", () => {
  const lines = machineLines([run(1, state, priority)])!;
  assert.match(lines[0]!, /^The machine's load beside the run, on 2 cores/);
  assert.deepEqual(lines.slice(2), [
    '| run | when | load (1 min) | load (5 min) | steal | busiest other processes |',
    '|---|---|---|---|---|---|',
    '| 1 | start | 1.52 | 0.98 | 0% | chromium, cc1plus, node |',
    '| 1 | end of warmup (6 s) | 1.7 | 1.01 | 2.5% | chromium |',
    '| 1 | end of baseline (18 s) | 1.9 | 1.1 | – | – |',
    '',
    "- run 1: the generator's threads asked for priority realtime: granted nice -10 (refused: SCHED_RR 1: Operation not permitted); the lab's processes at niceness 0.",
  ]);
});

test('no Machine section for runs that recorded no machine state (the simulation)', () => {
  assert.equal(machineLines([run(1, undefined)]), null);
});
