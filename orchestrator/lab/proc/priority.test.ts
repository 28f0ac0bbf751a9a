import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { asLabProcess } from '../local/pinning.js';
import { parseProcStatLine } from './machineLoad.js';
import {
  generatorThreads,
  HIGH_NICENESS,
  labNicenessArgs,
  releaseGeneratorPriority,
  requestGeneratorPriority,
  threadScheduling,
  type PriorityOps,
} from './priority.js';

const root = process.getuid?.() === 0;
const linux = process.platform === 'linux';

/** What /proc/self/task/<tid>/stat says of each thread a grant names. */
function scheduling(tids: readonly number[]) {
  return tids.map((tid) => threadScheduling(tid)!);
}

/** The stat line of a child `cmd args` started now, as a lab process is started (asLabProcess). */
function childStat(argv: [string, string[]]): ReturnType<typeof parseProcStatLine> {
  return parseProcStatLine(execFileSync(argv[0], argv[1]).toString());
}

test('normal asks for nothing and records that', () => {
  assert.deepEqual(requestGeneratorPriority('normal', [process.pid]), {
    requested: 'normal',
    granted: 'normal',
    refused: null,
    threads: [process.pid],
  });
});

test(
  'high as root: both generator threads (event loop and waker) at nice -10, as /proc reads them; given back on release',
  { skip: !(root && linux) && 'needs root on Linux' },
  async () => {
    const threads = await generatorThreads();
    assert.equal(threads.length, 2, 'the event loop and the waker');
    assert.equal(threads[0], process.pid);
    const before = scheduling(threads);
    const g = requestGeneratorPriority('high', threads);
    try {
      assert.deepEqual(g, { requested: 'high', granted: `nice ${HIGH_NICENESS}`, refused: null, threads });
      for (const s of scheduling(g.threads))
        assert.deepEqual(s, { nice: HIGH_NICENESS, policy: 0, rtPriority: 0 });
      // What this thread starts as a lab process runs at niceness 0 (nice -n 10 in front of it)…
      assert.deepEqual(labNicenessArgs(), ['nice', '-n', '10']);
      assert.equal(childStat(asLabProcess(undefined, 'cat', ['/proc/self/stat']))!.nice, 0);
      // …where a plain child inherits the generator's -10.
      assert.equal(childStat(['cat', ['/proc/self/stat']])!.nice, HIGH_NICENESS);
    } finally {
      releaseGeneratorPriority();
    }
    assert.deepEqual(scheduling(threads), before);
    assert.deepEqual(labNicenessArgs(), []);
  },
);

test(
  'realtime as root: SCHED_RR 1 on both threads, reset on fork so a lab process comes out normal at nice 0',
  { skip: !(root && linux) && 'needs root on Linux' },
  async () => {
    const threads = await generatorThreads();
    const g = requestGeneratorPriority('realtime', threads);
    try {
      assert.deepEqual(g, { requested: 'realtime', granted: 'SCHED_RR 1', refused: null, threads });
      for (const s of scheduling(g.threads))
        assert.deepEqual({ policy: s.policy, rt: s.rtPriority }, { policy: 2, rt: 1 });
      const child = childStat(asLabProcess(undefined, 'cat', ['/proc/self/stat']))!;
      assert.deepEqual({ nice: child.nice, policy: child.policy }, { nice: 0, policy: 0 });
    } finally {
      releaseGeneratorPriority();
    }
    for (const s of scheduling(threads)) assert.equal(s.policy, 0);
  },
);

// The child loads the module as root and only then becomes nobody (uid and gid 65534, no
// supplementary groups; its capabilities go with uid 0): a checkout under a private folder
// (mktemp -d is mode 0700) is not readable by nobody, as `runuser -u nobody` needed it to be.
test(
  "as an unprivileged user (nobody) both are refused, each with the kernel's reason, and the threads keep their priority",
  { skip: !(root && linux) && 'needs root on Linux' },
  () => {
    const mod = fileURLToPath(new URL('./priority.js', import.meta.url));
    const script = `
      const { requestGeneratorPriority, threadScheduling } = await import(${JSON.stringify(mod)});
      process.setgroups([]);
      process.setgid(65534);
      process.setuid(65534);
      const g = requestGeneratorPriority('realtime', [process.pid]);
      console.log(JSON.stringify({ g, now: threadScheduling(process.pid) }));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const { g, now } = JSON.parse(r.stdout) as {
      g: { granted: string | null; refused: string };
      now: object;
    };
    assert.equal(g.granted, null);
    assert.match(
      g.refused,
      /^SCHED_RR 1: .*Operation not permitted; nice -10: EACCES: not permitted \(a niceness below 0 needs CAP_SYS_NICE or RLIMIT_NICE of at least 30\)$/,
    );
    assert.deepEqual(now, { nice: 0, policy: 0, rtPriority: 0 });
  },
);

test('a refusal on one thread undoes the others: the threads get the same or nothing; realtime falls back to high', () => {
  const calls: string[] = [];
  const ops = (refuseNiceOn: number | undefined, refuseRt: boolean): PriorityOps => ({
    setNice: (tid, nice) => {
      if (tid === refuseNiceOn && nice < 0) throw new Error('EPERM: not permitted');
      calls.push(`nice ${tid} ${nice}`);
    },
    setRealtime: (tid) => {
      if (refuseRt) throw new Error("failed to set pid's policy: Operation not permitted");
      calls.push(`rr ${tid}`);
    },
    setNormal: (tid) => calls.push(`normal ${tid}`),
  });
  // Threads that do not exist in /proc: their niceness before reads as 0.
  const tids = [2 ** 22 + 1, 2 ** 22 + 2];
  const g = requestGeneratorPriority('high', tids, ops(tids[1], false), 'linux');
  assert.deepEqual(g, {
    requested: 'high',
    granted: null,
    refused: 'nice -10: EPERM: not permitted',
    threads: tids,
  });
  assert.deepEqual(calls, [`nice ${tids[0]} -10`, `nice ${tids[0]} 0`]);
  calls.length = 0;
  const fallback = requestGeneratorPriority('realtime', tids, ops(undefined, true), 'linux');
  assert.deepEqual(fallback, {
    requested: 'realtime',
    granted: 'nice -10',
    refused: "SCHED_RR 1: failed to set pid's policy: Operation not permitted",
    threads: tids,
  });
  releaseGeneratorPriority(ops(undefined, false));
  assert.deepEqual(calls, [
    `nice ${tids[0]} -10`,
    `nice ${tids[1]} -10`,
    `nice ${tids[0]} 0`,
    `nice ${tids[1]} 0`,
  ]);
  assert.deepEqual(
    requestGeneratorPriority('high', tids, ops(undefined, false), 'darwin').refused,
    'no per-thread priority on darwin',
  );
});

test('labNicenessArgs puts a lab process back at 0 from whatever it would inherit', () => {
  assert.deepEqual(labNicenessArgs(0), []);
  assert.deepEqual(labNicenessArgs(-10), ['nice', '-n', '10']);
  assert.deepEqual(labNicenessArgs(5), ['nice', '-n', '-5']);
  assert.deepEqual(asLabProcess([1], 'redis-server', ['--port', '1'], ['nice', '-n', '10']), [
    'nice',
    ['-n', '10', 'taskset', '-c', '1', 'redis-server', '--port', '1'],
  ]);
  assert.deepEqual(asLabProcess(undefined, 'node', ['api.js'], []), ['node', ['api.js']]);
});
