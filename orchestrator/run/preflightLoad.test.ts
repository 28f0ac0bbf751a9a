import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  preflightLoad,
  procLoadSource,
  quietThreshold,
  QUIET_LOAD_FLOOR,
  type LoadSource,
} from './preflightLoad.js';

/** A load that reads `loads` in turn (the last one from then on), on a clock that only sleeps move. */
function fakeMachine(loads: number[], busy: string[] = ['chromium', 'cc1plus', 'node']) {
  let t = 0;
  let i = 0;
  const source: LoadSource = {
    load1: () => loads[Math.min(i++, loads.length - 1)]!,
    busy: async () => busy,
  };
  return {
    source,
    now: () => t,
    sleep: async (ms: number) => {
      t += ms;
    },
  };
}

test('quietThreshold: the cores a run leaves free, never below the floor', () => {
  assert.equal(quietThreshold(2), QUIET_LOAD_FLOOR);
  assert.equal(quietThreshold(1), QUIET_LOAD_FLOOR);
  assert.equal(quietThreshold(8), 6.5);
});

test('a quiet machine: no warning, no busy processes measured', async () => {
  const said: string[] = [];
  const m = fakeMachine([0.3]);
  const c = await preflightLoad({ ...m, cores: 2, say: (l) => said.push(l) });
  assert.deepEqual(c, {
    load1: 0.3,
    threshold: 0.5,
    cores: 2,
    quiet: true,
    waitedMs: 0,
    busy: [],
    warning: null,
  });
  assert.deepEqual(said, []);
});

test('a busy machine: a warning naming the load, the cores and the busiest processes, and --wait-for-quiet', async () => {
  const said: string[] = [];
  const m = fakeMachine([1.8]);
  const c = await preflightLoad({ ...m, cores: 2, say: (l) => said.push(l) });
  assert.equal(c.quiet, false);
  assert.deepEqual(c.busy, ['chromium', 'cc1plus', 'node']);
  assert.deepEqual(said, [
    "metabench: warning: the machine's load (1.80, 1-minute average) is above 0.5 on 2 cores (a lab run needs 1.5 of them); busiest other processes: chromium, cc1plus, node. The generator may fall behind its schedule and the run come out invalid; --wait-for-quiet waits for the load to fall first.",
  ]);
});

test('--wait-for-quiet: waits with a status line until the load falls, then goes ahead without a warning', async () => {
  const said: string[] = [];
  const status: string[] = [];
  const m = fakeMachine([1.8, 1.2, 0.4]);
  const c = await preflightLoad({
    ...m,
    cores: 2,
    waitMs: 30_000,
    say: (l) => said.push(l),
    status: (l) => status.push(l),
  });
  assert.deepEqual(
    { quiet: c.quiet, load1: c.load1, waitedMs: c.waitedMs },
    { quiet: true, load1: 0.4, waitedMs: 10_000 },
  );
  assert.deepEqual(said, []);
  assert.deepEqual(status, [
    'waiting for the machine to quiet: load 1.80 > 0.5 (busy: chromium, cc1plus, node), 0 of 30 s',
    'waiting for the machine to quiet: load 1.20 > 0.5 (busy: chromium, cc1plus, node), 5 of 30 s',
  ]);
});

test('--wait-for-quiet: when the time is up, goes ahead with the warning', async () => {
  const said: string[] = [];
  const m = fakeMachine([1.8], []);
  const c = await preflightLoad({
    ...m,
    cores: 2,
    waitMs: 12_000,
    say: (l) => said.push(l),
    status: () => {},
  });
  assert.deepEqual({ quiet: c.quiet, waitedMs: c.waitedMs }, { quiet: false, waitedMs: 12_000 });
  assert.equal(said.length, 1);
  assert.match(
    said[0]!,
    /load \(1\.80, 1-minute average\) is above 0\.5 on 2 cores .*; waited 12 s, going ahead\.$/,
  );
  assert.doesNotMatch(said[0]!, /busiest/, 'no busy process seen: none named');
});

test('the real load source reads /proc/loadavg', () => {
  const load1 = Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]);
  // The kernel updates it every 5 s: the two reads agree unless an update fell between them.
  assert.ok(Math.abs(procLoadSource.load1() - load1) < 2, `${procLoadSource.load1()} against ${load1}`);
});
