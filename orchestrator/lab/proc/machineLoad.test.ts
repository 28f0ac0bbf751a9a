import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  busiestProcesses,
  parseCpuTimes,
  parseLoadavg,
  parseProcStatLine,
  snapshotProcesses,
  stealPct,
  type ProcFiles,
} from './machineLoad.js';

const FIXTURES = fileURLToPath(new URL('../../../../test/fixtures/proc/', import.meta.url));

/** A /proc tree on disk (test/fixtures/proc/<which>): /proc/x is <root>/x. */
export function fixtureProc(which: string): ProcFiles {
  const root = join(FIXTURES, which);
  return {
    read: (path) => {
      try {
        return readFileSync(join(root, path.replace(/^\/proc\//, '')), 'utf8');
      } catch {
        return null;
      }
    },
    pids: () =>
      readdirSync(root)
        .filter((n) => /^\d+$/.test(n))
        .map(Number),
  };
}

test('parseLoadavg reads the three averages of /proc/loadavg and refuses anything else', () => {
  assert.deepEqual(parseLoadavg(fixtureProc('before').read('/proc/loadavg')!), {
    load1: 1.52,
    load5: 0.98,
    load15: 0.6,
  });
  assert.throws(() => parseLoadavg(''), /not a \/proc\/loadavg text/);
  assert.throws(() => parseLoadavg('1.0 x 2.0 1/2 3'), /not a \/proc\/loadavg text/);
});

test('parseCpuTimes reads the aggregate cpu line; stealPct is the steal share of the interval', () => {
  const before = parseCpuTimes(fixtureProc('before').read('/proc/stat')!);
  const after = parseCpuTimes(fixtureProc('after').read('/proc/stat')!);
  assert.deepEqual(before, { total: 289982, idle: 114953 + 568, steal: 1000 });
  assert.equal(after.total - before.total, 200);
  assert.equal(stealPct(before, after), 5); // 10 of 200 ticks
  assert.equal(stealPct(after, after), null, 'no time passed: no share');
  // An old kernel without the steal column: 0 stolen.
  assert.equal(parseCpuTimes('cpu  10 0 5 100\n').steal, 0);
  assert.throws(() => parseCpuTimes('intr 5\n'), /no aggregate "cpu" line/);
});

test('parseProcStatLine reads pid, ppid, name, own CPU, niceness and policy, a name with spaces and parentheses included', () => {
  const tmux = parseProcStatLine(fixtureProc('after').read('/proc/500/stat')!)!;
  assert.deepEqual(
    { pid: tmux.pid, ppid: tmux.ppid, name: tmux.name, ticks: tmux.ticks },
    { pid: 500, ppid: 1, name: 'tmux: (server)', ticks: 62 },
  );
  const rr = parseProcStatLine(readFileSync(join(FIXTURES, 'thread-rr.stat'), 'utf8'))!;
  assert.deepEqual(
    { nice: rr.nice, rtPriority: rr.rtPriority, policy: rr.policy },
    { nice: -10, rtPriority: 1, policy: 2 },
  );
  assert.equal(parseProcStatLine('garbage'), null);
});

test('busiestProcesses: top 3 names by CPU over the interval, summed by name, leaving out the excluded and their descendants', () => {
  const before = snapshotProcesses(fixtureProc('before'));
  const after = snapshotProcesses(fixtureProc('after'));
  // node (100) used the most but is the orchestrator; redis and postgres (its descendants)
  // are the lab. chromium 30 + 30, cc1plus 50 (started within), tmux 20, make 1, sshd 0.
  assert.deepEqual(busiestProcesses(before, after, [100]), ['chromium', 'cc1plus', 'tmux: (server)']);
  assert.deepEqual(busiestProcesses(before, after, [100], 5), [
    'chromium',
    'cc1plus',
    'tmux: (server)',
    'make',
  ]);
  // Nothing excluded: the orchestrator and the lab lead.
  assert.deepEqual(busiestProcesses(before, after, []), ['node', 'postgres', 'redis-server']);
  // A pid whose program changed within the interval counts from zero.
  const reused = new Map(after);
  reused.set(400, { ...after.get(400)!, name: 'python3', ticks: 7 });
  assert.deepEqual(busiestProcesses(before, reused, [100], 5).slice(3), ['python3', 'make']);
  // The kernel's workers, whose names change with their work queue, are one name.
  const kworkers = new Map(after);
  kworkers.set(900, { ...after.get(400)!, pid: 900, name: 'kworker/1:1-events', ticks: 40 });
  kworkers.set(901, { ...after.get(400)!, pid: 901, name: 'kworker/u8:2-writeback', ticks: 40 });
  assert.deepEqual(busiestProcesses(before, kworkers, [100]), ['kworker', 'chromium', 'cc1plus']);
});

test('busiestProcesses names a real busy child among the busy ones, and leaves it out as a descendant of an excluded pid', async () => {
  // A Node child that names itself (process.title sets its comm) and burns CPU while it lives.
  const child = spawn(process.execPath, ['-e', 'process.title = "mbbusytest"; for (;;);'], {
    stdio: 'ignore',
  });
  try {
    const pid = child.pid!;
    const before = snapshotProcesses();
    // A busy machine gives it less than a core: wait until it has used 0.3 s of CPU under its name.
    let after = snapshotProcesses();
    for (let i = 0; i < 150; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = snapshotProcesses();
      const p = after.get(pid);
      if (p?.name === 'mbbusytest' && p.ticks - (before.get(pid)?.ticks ?? 0) >= 30) break;
    }
    assert.equal(after.get(pid)?.name, 'mbbusytest');
    const all = busiestProcesses(before, after, [], 1000);
    assert.ok(all.includes('mbbusytest'), `mbbusytest among ${all.join(', ')}`);
    // Excluding this test's process excludes its child (what the orchestrator does for the lab).
    assert.ok(!busiestProcesses(before, after, [process.pid], 1000).includes('mbbusytest'));
  } finally {
    child.kill('SIGKILL');
  }
});
