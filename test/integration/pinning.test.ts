import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { runtimePlugin } from '../../orchestrator/lab/RuntimePlugin.js';
import { allowedCpus, formatCpuList, splitCpus, type Pinning } from '../../orchestrator/lab/proc/affinity.js';
import { PIN_BY_DEFAULT_FROM_CPUS } from '../../orchestrator/lab/local/pinning.js';
import { processTree } from '../../orchestrator/lab/proc/procUsage.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { runCli, tempDir } from '../helpers/cli.js';
import { runExperiment } from '../../orchestrator/run/runExperiment.js';

// Issue 23, point 4: on the local runtime the orchestrator (every thread of it) and every
// process of the lab run on disjoint CPUs while the lab is up, as manifest.json records;
// --no-pin leaves both where they were; the orchestrator gets its CPUs back afterwards.

registerRuntimes();

/** The CPUs each thread of this process may run on, by thread id. */
function threadCpus(): Map<string, number[]> {
  const out = new Map<string, number[]>();
  for (const tid of readdirSync('/proc/self/task'))
    try {
      out.set(tid, allowedCpus(`self/task/${tid}`));
    } catch {
      /* the thread ended between the listing and the read */
    }
  return out;
}

function assertEveryThread(cpus: readonly number[], when: string): void {
  const threads = threadCpus();
  assert.ok(threads.size >= 2, `the orchestrator has its threads (${threads.size})`);
  for (const [tid, c] of threads) assert.deepEqual(c, cpus, `thread ${tid} ${when}`);
}

const ORIGINAL = allowedCpus();
const SPLIT = splitCpus(ORIGINAL);
const skip = SPLIT ? false : `this process may use ${ORIGINAL.length} CPU: nothing to split`;

/** A lab with every kind of process the local runtime starts: the api, the fault proxy, Redis, Postgres. */
const LAB = `
name: pinning
lab:
  api: { workers: 2, work: { dist: constant, mean: 1ms } }
  cache: { ttl: 1h, prewarm: false }
  db: { keys: 10, pool: 2, query: { dist: constant, mean: 1ms } }
load: { arrival: constant, rate: 1/s, mix: [{ name: r, share: 100%, key: { dist: uniform, keys: 10 } }] }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 1s, trigger: { kind: pause, target: api, duration: 1s }, observe: 1s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;

test(
  'a local lab up: its processes (Postgres backends too) on the lab CPUs, every orchestrator thread on the generator CPUs; down gives them back',
  { skip },
  async () => {
    const lab = runtimePlugin('local').lab!(parseExperiment(LAB, 'pinning.yaml'), { seed: 1, pin: true });
    try {
      await lab.up();
      const p = lab.pinning as Extract<Pinning, { applied: true }>;
      assert.equal(p.applied, true, JSON.stringify(lab.pinning));
      assert.deepEqual(p.generatorCpus, SPLIT!.generator);
      assert.deepEqual(p.labCpus, SPLIT!.lab);
      assert.deepEqual(p.allowedCpus, ORIGINAL);
      const procs = lab.processes();
      assert.deepEqual(procs.map((x) => x.component).sort(), ['api', 'faultproxy', 'postgres', 'redis']);
      for (const proc of procs) {
        const pids = proc.component === 'postgres' ? processTree(proc.pid) : [proc.pid];
        if (proc.component === 'postgres')
          assert.ok(pids.length > 1, 'the postmaster has forked its workers');
        for (const pid of pids) assert.deepEqual(allowedCpus(pid), p.labCpus, `${proc.component} pid ${pid}`);
      }
      assertEveryThread(p.generatorCpus, 'while the lab is up');
    } finally {
      await lab.down();
    }
    assertEveryThread(ORIGINAL, 'after down()');
  },
);

test(
  'pin: false (--no-pin): the lab runs where the orchestrator may, and the orchestrator is left alone',
  { skip },
  async () => {
    const e = parseExperiment(LAB, 'pinning.yaml');
    const lab = runtimePlugin('local').lab!({ ...e, lab: { api: e.lab!.api } }, { seed: 1, pin: false });
    try {
      await lab.up();
      assert.deepEqual(lab.pinning, { applied: false, reason: '--no-pin' });
      const api = lab.processes().find((x) => x.component === 'api')!;
      assert.deepEqual(allowedCpus(api.pid), ORIGINAL);
      assertEveryThread(ORIGINAL, 'with --no-pin');
    } finally {
      await lab.down();
    }
  },
);

test(
  'a lab that fails to come up still gives the orchestrator its CPUs back on down()',
  { skip },
  async () => {
    const e = parseExperiment(LAB, 'pinning.yaml');
    // Two replicas from port 65535 would go past the last port: up() refuses after pinning.
    const lab = runtimePlugin('local').lab!(
      { ...e, lab: { api: { ...e.lab!.api, replicas: 2 } } } as typeof e,
      { seed: 1, pin: true },
    );
    (lab as unknown as { cfg: { apiPort: number } }).cfg.apiPort = 65535;
    await assert.rejects(lab.up(), /past port 65535/);
    await lab.down();
    assertEveryThread(ORIGINAL, 'after a failed up() and down()');
  },
);

const RUN = `name: pinning-run
lab: { api: { workers: 2, work: { dist: constant, mean: 2ms } } }
load: { arrival: constant, rate: 20/s }
client: { timeout: 500ms, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 1s, trigger: { kind: pause, target: api, duration: 1s }, observe: 1s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;

test('metabench run records the pinning in manifest.json: --pin pins, the default pins from 4 CPUs, --no-pin and --runtime sim record why not', async () => {
  const dir = tempDir('pinning');
  const file = join(dir, 'run.yaml');
  writeFileSync(file, RUN);
  const manifest = async (args: string[]): Promise<{ pinning: Pinning }> => {
    const out = join(dir, `out-${args.join('').replace(/\W/g, '')}`);
    const r = await runCli(['run', '--any-scale', file, '--out', out, '--quiet', ...args]);
    // A loaded machine may make so short a run invalid (exit 11, late sends): its manifest is what counts here.
    assert.ok(r.code === 0 || (r.code === 11 && /runs? invalid/.test(r.stderr)), r.stderr);
    return JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as { pinning: Pinning };
  };
  // By default, pinned only from PIN_BY_DEFAULT_FROM_CPUS: below, the reason says so.
  const auto = await manifest([]);
  if (ORIGINAL.length >= PIN_BY_DEFAULT_FROM_CPUS) assert.equal(auto.pinning.applied, true);
  else
    assert.deepEqual(auto.pinning, {
      applied: false,
      reason: `${ORIGINAL.length} CPUs allowed (${formatCpuList(ORIGINAL)}): pinned by default from ${PIN_BY_DEFAULT_FROM_CPUS}; --pin pins anyway`,
      allowedCpus: ORIGINAL,
    });
  const pinned = await manifest(['--pin']);
  if (SPLIT)
    assert.deepEqual(pinned.pinning, {
      applied: true,
      generatorCpus: SPLIT.generator,
      labCpus: SPLIT.lab,
      allowedCpus: ORIGINAL,
    });
  else assert.equal(pinned.pinning.applied, false);
  assert.deepEqual((await manifest(['--no-pin'])).pinning, { applied: false, reason: '--no-pin' });
  assert.deepEqual((await manifest(['--runtime', 'sim'])).pinning, { applied: false, reason: 'runtime sim' });
});

test(
  'a run in this process pins the orchestrator while it runs and gives its CPUs back when it ends',
  { skip },
  async () => {
    const dir = tempDir('pinning-inproc');
    const seen: number[][] = [];
    // Sampled while the run goes on (the same event loop): every thread's CPUs, once a second.
    const timer = setInterval(() => seen.push(...threadCpus().values()), 1000);
    try {
      const r = await runExperiment(parseExperiment(RUN, 'run.yaml'), {
        scale: 1,
        out: join(dir, 'out'),
        quiet: true,
        stop: new AbortController().signal,
        lab: { pin: true },
      });
      assert.equal(r.runs.length, 1);
    } finally {
      clearInterval(timer);
    }
    assert.ok(
      seen.some((c) => c.join() === SPLIT!.generator.join()),
      `the orchestrator ran on the generator CPUs during the run (saw ${JSON.stringify(seen)})`,
    );
    assertEveryThread(ORIGINAL, 'after the run');
  },
);
