import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { VirtualClock } from '../../../foundation/clock.js';
import { ProcSampler } from './procSampler.js';
import { parseAnonBytes, parseRssBytes, parseStat, readProcUsage, type ProcUsage } from './procUsage.js';
import type { LabProcess } from '../Lab.js';

test('parseStat reads ppid and the four CPU times after a command name with spaces and parentheses', () => {
  // fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime ...
  const stat = '4242 (post gres) (x)) S 17 4242 4242 0 -1 4194560 10 0 0 0 150 50 7 3 20 0 1 0 900 0 0';
  assert.deepEqual(parseStat(stat), { ppid: 17, ticks: 150 + 50 + 7 + 3 });
  assert.equal(parseRssBytes('Name:\tredis\nVmRSS:\t    2048 kB\nThreads: 4\n'), 2048 * 1024);
  assert.equal(parseRssBytes('Name:\tzombie\n'), 0);
  const status =
    'Name:\tpostgres\nVmRSS:\t  180000 kB\nRssAnon:\t    9000 kB\nRssFile:\t   11000 kB\nRssShmem:\t  160000 kB\n';
  assert.equal(parseAnonBytes(status), 9000 * 1024);
  assert.equal(parseAnonBytes('Name:\tzombie\n'), 0);
});

test('readProcUsage sees CPU time spent by a process tree, counting a child that exited', async () => {
  // A shell whose child burns CPU for a while and exits: its CPU moves into the shell's cutime.
  const sh = spawn(
    'sh',
    // It burns 400 ms of its own CPU time, not of wall time: a starved machine gives less CPU per second.
    ['-c', `${process.execPath} -e "while (process.cpuUsage().user < 400000);"; sleep 30`],
    { stdio: 'ignore', detached: true },
  );
  try {
    const before = readProcUsage([sh.pid!]).get(sh.pid!);
    assert.ok(before, 'the shell is readable');
    // Poll rather than wait a fixed time: on a busy machine the burn takes longer than 400 ms.
    let after = readProcUsage([sh.pid!]).get(sh.pid!)!;
    for (let i = 0; i < 150 && after.cpuSeconds - before.cpuSeconds < 0.2; i++) {
      await new Promise((r) => setTimeout(r, 100));
      after = readProcUsage([sh.pid!]).get(sh.pid!)!;
    }
    assert.ok(after.cpuSeconds - before.cpuSeconds >= 0.2, `cpu ${before.cpuSeconds} → ${after.cpuSeconds}`);
    assert.ok(after.rssBytes > 0);
    assert.ok(
      after.anonBytes > 0 && after.anonBytes <= after.rssBytes,
      `anon ${after.anonBytes} of ${after.rssBytes}`,
    );
    assert.equal(readProcUsage([2 ** 22 + 7]).size, 0, 'a pid that does not exist is absent');
  } finally {
    process.kill(-sh.pid!, 'SIGKILL'); // the shell's group: its sleep too
  }
});

test('ProcSampler writes CPU-second deltas, RSS and anonymous memory per component and bucket; a new pid restarts the delta', () => {
  let procs: LabProcess[] = [
    { component: 'api', pid: 10, command: 'node' },
    { component: 'redis', pid: 20, command: 'redis-server' },
  ];
  const usage = new Map<number, ProcUsage>();
  // Anonymous memory is a tenth of the RSS here, to tell the two columns apart.
  const set = (pid: number, cpuSeconds: number, rssBytes: number) =>
    usage.set(pid, { cpuSeconds, rssBytes, anonBytes: rssBytes / 10 });
  const s = new ProcSampler(
    () => procs,
    new VirtualClock(),
    1000,
    (pids) => {
      const m = new Map<number, ProcUsage>();
      for (const p of pids) if (usage.has(p)) m.set(p, usage.get(p)!);
      return m;
    },
  );
  set(10, 5.0, 100);
  set(20, 1.0, 50);
  s.sample(-1);
  set(10, 5.6, 110);
  set(20, 1.25, 60);
  s.sample(0);
  usage.delete(20); // redis not readable in bucket 1 (gone)
  set(10, 6.5, 120);
  s.sample(1);
  procs = [
    { component: 'api', pid: 10, command: 'node' },
    { component: 'redis', pid: 21, command: 'redis-server' },
  ];
  set(21, 0.1, 70); // restarted redis: no delta in its first bucket
  set(10, 6.5, 120);
  s.sample(2);
  set(21, 0.4, 70);
  s.sample(3);
  return s.stop().then((series) => {
    const round = (a: (number | null)[] | undefined) =>
      a?.map((v) => (v === null ? null : Math.round(v * 1000) / 1000));
    assert.deepEqual(round(series['proc_api_cpu']), [0.6, 0.9, 0, 0]);
    assert.deepEqual(series['proc_api_rss_bytes'], [110, 120, 120, 120]);
    assert.deepEqual(round(series['proc_redis_cpu']), [0.25, null, null, 0.3]);
    assert.deepEqual(series['proc_redis_rss_bytes'], [60, null, 70, 70]);
    assert.deepEqual(series['proc_api_anon_bytes'], [11, 12, 12, 12]);
    assert.deepEqual(series['proc_redis_anon_bytes'], [6, null, 7, 7]);
  });
});

test('ProcSampler names api replicas apart: proc_api0_*, proc_api1_*, each with its own delta', async () => {
  const procs: LabProcess[] = [
    { component: 'api', pid: 10, command: 'node', replica: 0 },
    { component: 'api', pid: 11, command: 'node', replica: 1 },
  ];
  const usage = new Map<number, ProcUsage>([
    [10, { cpuSeconds: 1, rssBytes: 100, anonBytes: 10 }],
    [11, { cpuSeconds: 2, rssBytes: 200, anonBytes: 20 }],
  ]);
  const s = new ProcSampler(
    () => procs,
    new VirtualClock(),
    1000,
    () => new Map(usage),
  );
  s.sample(-1);
  usage.set(10, { cpuSeconds: 1.5, rssBytes: 100, anonBytes: 10 });
  usage.set(11, { cpuSeconds: 2.25, rssBytes: 200, anonBytes: 20 });
  s.sample(0);
  const series = await s.stop();
  assert.deepEqual(Object.keys(series).sort(), [
    'proc_api0_anon_bytes',
    'proc_api0_cpu',
    'proc_api0_rss_bytes',
    'proc_api1_anon_bytes',
    'proc_api1_cpu',
    'proc_api1_rss_bytes',
  ]);
  assert.deepEqual(series['proc_api0_cpu'], [0.5]);
  assert.deepEqual(series['proc_api1_cpu'], [0.25]);
  assert.deepEqual(series['proc_api1_rss_bytes'], [200]);
});
