import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readGoals, renderSummary, writeGoals } from './goals.js';

test('each benchmark figure is written beside its goal and read back, the newest run of each replacing the last', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-goals-'));
  try {
    writeGoals(
      'load',
      [3, 2, 1],
      [{ figure: 'rate held', measured: '20000/s', goal: '>= 40 000/s', met: false }],
      dir,
    );
    writeGoals(
      'jobs',
      [0.5, 0.4, 0.3],
      [{ figure: 'maps', measured: 'identical', goal: 'identical', met: true }],
      dir,
    );
    writeGoals(
      'load',
      [0.1, 0.2, 0.3],
      [{ figure: 'rate held', measured: '40000/s', goal: '>= 40 000/s', met: true }],
      dir,
    );
    const reports = readGoals(dir);
    assert.deepEqual(
      reports.map((r) => [r.benchmark, r.loadAverage, r.goals[0]!.measured]),
      [
        ['jobs', [0.5, 0.4, 0.3], 'identical'],
        ['load', [0.1, 0.2, 0.3], '40000/s'],
      ],
    );
    assert.equal(typeof reports[0]!.machine.cpus, 'number');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(readGoals(join(dir, 'absent')), []);
});

test('the summary puts every figure beside its goal, says which are not met, and the load each ran under', () => {
  const machine = { hostname: 'h', cpuModel: 'CPU', cpus: 2, memoryBytes: 2 ** 31, os: 'Linux', node: 'v20' };
  const text = renderSummary(
    [
      {
        benchmark: 'load',
        date: '2026-12-02T17:00:00.000Z',
        machine,
        loadAverage: [1.5, 1, 0.5],
        goals: [
          { figure: 'rate held', measured: '30000/s', goal: '>= 40 000/s', met: false },
          { figure: 'CPU per 100k', measured: '1.2', goal: "<= autocannon's", met: true },
        ],
      },
      {
        benchmark: 'pinning',
        date: '2026-12-02T17:10:00.000Z',
        machine,
        loadAverage: [2, 1, 1],
        goals: [{ figure: 'late sends pinned | unpinned', measured: '0.1% | 0.3%', goal: '–', met: null }],
      },
    ],
    new Date('2026-12-02T18:00:00Z'),
  );
  const rows = text.split('\n');
  assert.ok(rows.includes('| load | rate held | 30000/s | >= 40 000/s | **not met** |'), text);
  assert.ok(rows.includes("| load | CPU per 100k | 1.2 | <= autocannon's | met |"), text);
  // A `|` inside a figure is escaped, not a new column.
  assert.ok(rows.includes('| pinning | late sends pinned \\| unpinned | 0.1% \\| 0.3% | – | – |'), text);
  // A figure without a goal is not counted.
  assert.ok(rows.includes('1 of 2 goals met.'), text);
  assert.ok(rows.includes('| load | 2026-12-02 17:00 UTC | 1.5, 1, 0.5 |'), text);
  assert.ok(rows.includes('Machine: CPU, 2 cores, 2.0 GiB, Linux, Node v20.'), text);
  assert.match(renderSummary([]), /No benchmark has written its figures yet/);
});
