import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { parseProcStatLine } from '../../orchestrator/lab/proc/machineLoad.js';
import { processTree } from '../../orchestrator/lab/proc/procUsage.js';
import { threadScheduling } from '../../orchestrator/lab/proc/priority.js';
import type { MachineState, PriorityRecord } from '../../orchestrator/results/machineState.js';
import { runExperiment } from '../../orchestrator/run/runExperiment.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { tempDir } from '../helpers/cli.js';

// Issue 31, points 2 and 3: a lab run raises its generator's threads' priority, runs the
// lab's processes at niceness 0, and records both, with the machine's load at the start
// and at each phase's end, in manifest.json (and the load in summary.json).

registerRuntimes();

const root = process.getuid?.() === 0;

/** A lab with Redis and Postgres, whose postmaster forks backends the orchestrator does not start itself. */
const LAB = `
name: priority
lab:
  api: { workers: 2, work: { dist: constant, mean: 1ms } }
  cache: { ttl: 1h, prewarm: false }
  db: { keys: 10, pool: 2, query: { dist: constant, mean: 1ms } }
load: { arrival: constant, rate: 20/s, mix: [{ name: r, share: 100%, key: { dist: uniform, keys: 10 } }] }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

interface Manifest {
  priority: PriorityRecord;
  machine: MachineState & { cpuModel: string };
  topology: { components: { name: string; pid: number | null }[] };
}

/** Runs LAB at `priority`; `during` sees the manifest and /proc while the lab is up. */
async function runAt(
  priority: 'normal' | 'high' | 'realtime',
  during: (m: Manifest) => void,
): Promise<{ manifest: Manifest; summary: { machine?: MachineState } }> {
  const dir = tempDir(`priority-${priority}`);
  const out = join(dir, 'out');
  const file = join(out, 'run-1', 'manifest.json');
  let checked: unknown = 'the manifest never appeared while the run went on';
  // The same event loop as the run: it polls for the manifest, written once the lab is up.
  const timer = setInterval(() => {
    if (checked !== 'the manifest never appeared while the run went on' || !existsSync(file)) return;
    try {
      during(JSON.parse(readFileSync(file, 'utf8')) as Manifest);
      checked = undefined;
    } catch (err) {
      checked = err;
    }
  }, 50);
  try {
    await runExperiment(parseExperiment(LAB, 'priority.yaml'), {
      scale: 1,
      out,
      quiet: true,
      stop: new AbortController().signal,
      lab: { priority },
    });
  } finally {
    clearInterval(timer);
  }
  try {
    if (checked !== undefined) throw checked;
    return {
      manifest: JSON.parse(readFileSync(file, 'utf8')) as Manifest,
      summary: JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as {
        machine?: MachineState;
      },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every process of the lab (the postmaster's children too) and its niceness. */
function labNiceness(m: Manifest): { name: string; pid: number; nice: number }[] {
  const out: { name: string; pid: number; nice: number }[] = [];
  for (const c of m.topology.components)
    if (c.pid !== null)
      for (const pid of processTree(c.pid)) {
        const s = parseProcStatLine(readFileSync(`/proc/${pid}/stat`, 'utf8'))!;
        out.push({ name: `${c.name} ${s.name}`, pid, nice: s.nice });
      }
  return out;
}

test(
  "a local run at --priority high: the generator's threads are at the niceness manifest.json claims, the lab's processes at 0, and the machine's load is recorded at the start and each phase's end",
  { skip: !root && 'the grant needs root (CAP_SYS_NICE)' },
  async () => {
    const { manifest, summary } = await runAt('high', (m) => {
      assert.equal(m.priority.generator.granted, 'nice -10');
      assert.equal(m.priority.generator.threads.length, 2);
      for (const tid of m.priority.generator.threads)
        assert.equal(threadScheduling(tid)?.nice, -10, `thread ${tid}`);
      const lab = labNiceness(m);
      assert.ok(lab.length >= 3, JSON.stringify(lab));
      assert.ok(
        lab.some(
          (p) =>
            p.name.startsWith('postgres') &&
            p.pid !== m.topology.components.find((c) => c.name === 'postgres')!.pid,
        ),
        'a postgres backend is seen',
      );
      for (const p of lab) assert.equal(p.nice, m.priority.lab.niceness, `${p.name} (${p.pid})`);
      assert.equal(m.priority.lab.niceness, 0);
      // At the lab's start: the load and the cores, and no phase yet.
      assert.equal(m.machine.start.atS, null);
      assert.deepEqual(m.machine.phases, {});
    });
    // After the run: the threads are given back their niceness.
    for (const tid of manifest.priority.generator.threads)
      if (threadScheduling(tid)) assert.equal(threadScheduling(tid)!.nice, 0);
    // The description of the machine and its state, together.
    assert.ok(manifest.machine.cpuModel);
    assert.equal(manifest.machine.cores, summary.machine!.cores);
    assert.deepEqual(Object.keys(summary.machine!.phases), ['warmup', 'baseline', 'trigger', 'observe']);
    assert.deepEqual(manifest.machine.phases, summary.machine!.phases);
    // Each at its phase's end on the run's clock (the last where the driver stopped, up to 250 ms before).
    const at = Object.values(summary.machine!.phases).map((p) => p.atS!);
    [1, 3, 4, 6].forEach((end, k) =>
      assert.ok(at[k]! >= end - 0.25 && at[k]! < end + 2, `${at[k]} for ${end}`),
    );
    for (const s of [summary.machine!.start, ...Object.values(summary.machine!.phases)]) {
      assert.ok(s.load1 >= 0 && s.load5 >= 0);
      assert.ok(s.busy.length <= 3);
      // The orchestrator (node) and the lab's processes are never among the busy ones.
      for (const name of ['postgres', 'redis-server', 'faultproxy'])
        assert.ok(!s.busy.includes(name), `${name} in ${s.busy.join(', ')}`);
    }
  },
);

test(
  'a local run at --priority realtime: SCHED_RR 1 on the threads the manifest names, the lab at SCHED_OTHER and niceness 0',
  { skip: !root && 'the grant needs root (CAP_SYS_NICE)' },
  async () => {
    await runAt('realtime', (m) => {
      assert.deepEqual(m.priority.generator, {
        ...m.priority.generator,
        requested: 'realtime',
        granted: 'SCHED_RR 1',
        refused: null,
      });
      for (const tid of m.priority.generator.threads) {
        const s = threadScheduling(tid)!;
        assert.deepEqual({ policy: s.policy, rt: s.rtPriority }, { policy: 2, rt: 1 }, `thread ${tid}`);
      }
      for (const p of labNiceness(m)) {
        assert.equal(p.nice, 0, p.name);
        assert.equal(threadScheduling(p.pid)?.policy, 0, `${p.name} is not real-time`);
      }
    });
  },
);
