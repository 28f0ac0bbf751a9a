import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { SpecError } from '../../foundation/errors.js';
import { registerRuntimes } from '../cli/runtimes.js';
import { parseExperiment } from '../spec/load.js';
import { createTrigger } from '../trigger/registry.js';
import { addNetem, removeNetem } from './engine/netemHost.js';
import { refuseNetem } from './engine/refuse.js';
import { netemAddCommand, netemArgs, netemDelCommand, netemMissing, type Runner } from './netem.js';
import { refuseOn, runtimePlugin } from './RuntimePlugin.js';

registerRuntimes();

const experiment = (trigger: string): string => `name: n
lab:
  api: { workers: 4, work: { dist: constant, mean: 10ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 2s, trigger: { ${trigger} }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
`;

test('netem: the qdisc’s arguments, and the commands that put it on a container’s eth0 and take it off', () => {
  assert.equal(
    netemArgs({ delayMs: 100, jitterMs: 10, loss: 0.05 }).join(' '),
    'netem delay 100ms 10ms loss 5%',
  );
  assert.deepEqual(netemArgs({ loss: 0.001 }), ['netem', 'loss', '0.1%']);
  assert.deepEqual(netemArgs({ delayMs: 40, jitterMs: 0 }), ['netem', 'delay', '40ms']);
  assert.throws(() => netemArgs({}), /needs a delay or a loss/);
  assert.equal(
    netemAddCommand(4242, { delayMs: 50 }).join(' '),
    'nsenter -t 4242 -n tc qdisc add dev eth0 root netem delay 50ms',
  );
  assert.equal(netemDelCommand(4242).join(' '), 'nsenter -t 4242 -n tc qdisc del dev eth0 root');
});

test('netem on a container: the add runs in its process’s namespace; the undo says when nothing is left to take off', () => {
  // This process stands for a container: its cgroup names the "container id".
  const cgroup = readFileSync('/proc/self/cgroup', 'utf8');
  const id = /[0-9a-f]{12,}/.exec(cgroup)?.[0] ?? cgroup.trim().split('\n')[0]!;
  const c = { id, name: 'lab-redis-1', pid: process.pid };
  const ran: string[][] = [];
  const ok: Runner = (argv) => (ran.push([...argv]), { status: 0, stderr: '' });
  addNetem(c, { delayMs: 100, loss: 0.02 }, ok);
  assert.deepEqual(ran[0], netemAddCommand(process.pid, { delayMs: 100, loss: 0.02 }));
  assert.equal(removeNetem(c, ok), `lab-redis-1: ${netemDelCommand(process.pid).join(' ')}`);
  const none: Runner = () => ({ status: 2, stderr: 'RTNETLINK answers: No such file or directory\n' });
  assert.equal(removeNetem(c, none), 'lab-redis-1: no netem qdisc left, nothing to undo');
  const broken: Runner = () => ({ status: 1, stderr: 'nsenter: Operation not permitted' });
  assert.throws(
    () => removeNetem(c, broken),
    /netem undo on lab-redis-1: .* failed: nsenter: Operation not permitted/,
  );
  assert.throws(
    () => addNetem(c, { loss: 0.5 }, broken),
    /netem on lab-redis-1: .* failed: nsenter: Operation not permitted/,
  );
  // A process this host does not see (a remote engine): refused, and its undo has nothing to do.
  const remote = { id: 'f'.repeat(64), name: 'far', pid: process.pid };
  assert.throws(
    () => addNetem(remote, { loss: 0.5 }, ok),
    /not on this machine's \/proc \(a remote engine or a VM\)/,
  );
  assert.match(removeNetem(remote, ok), /nothing to undo/);
});

test('sch_netem detection: loaded, probed present, probed unknown, probe unusable', () => {
  const absent = '/nonexistent/sys/module/sch_netem';
  assert.equal(netemMissing({ sysModule: '/proc/self' }), undefined, 'a loaded module is enough');
  const probes: string[][] = [];
  const present: Runner = (argv) => (probes.push([...argv]), { status: 0, stderr: '' });
  assert.equal(netemMissing({ sysModule: absent, run: present, root: true }), undefined);
  assert.equal(probes[0]!.join(' '), 'unshare -n tc qdisc add dev lo root netem delay 1ms');
  netemMissing({ sysModule: absent, run: present, root: false });
  assert.deepEqual(probes[1]!.slice(0, 3), ['unshare', '-r', '-n'], 'a user namespace when not root');
  const unknown: Runner = () => ({ status: 2, stderr: 'Error: Specified qdisc kind is unknown.\n' });
  assert.match(
    netemMissing({ sysModule: absent, run: unknown, root: true })!,
    /^this kernel has no sch_netem module .*"Error: Specified qdisc kind is unknown\.".*modprobe sch_netem.*CONFIG_NET_SCH_NETEM/,
  );
  const noTc: Runner = () => ({ status: null, stderr: '', error: 'spawnSync unshare ENOENT' });
  assert.match(
    netemMissing({ sysModule: absent, run: noTc, root: true })!,
    /^could not tell whether .*ENOENT/,
  );
});

test('a netem trigger: delay and/or loss on a component; neither, or jitter without delay, is refused by field', () => {
  const e = parseExperiment(
    experiment('kind: netem, target: redis, delay: 80ms, jitter: 5ms, loss: 1%, duration: 2s').replace(
      'lab:\n',
      'lab:\n  cache: { ttl: 60s, prewarm: true }\n  db: { keys: 100, pool: 4, query: { dist: constant, mean: 1ms } }\n',
    ),
    'n.yaml',
  );
  const t = createTrigger(e.schedule.triggers[0]!);
  assert.equal(t.describe(), 'netem delay 80 ms ± 5 ms, loss 1% on redis');
  assert.equal(t.target, 'redis');
  for (const [trigger, path, why] of [
    ['kind: netem, target: api, duration: 2s', 'schedule.trigger.kind', /needs a delay, a loss, or both/],
    [
      'kind: netem, target: api, jitter: 5ms, loss: 1%, duration: 2s',
      'schedule.trigger.jitter',
      /jitter goes with a delay/,
    ],
    ['kind: netem, target: api, loss: 0%, duration: 2s', 'schedule.trigger.loss', /must be above 0%/],
  ] as const)
    assert.throws(
      () => parseExperiment(experiment(trigger), 'bad.yaml'),
      (err: unknown) =>
        err instanceof SpecError && err.issues[0]!.path === path && why.test(err.issues[0]!.message),
      trigger,
    );
});

test('netem is refused before a run where it cannot act: local and sim by capability, swarm by its nodes, docker where the kernel lacks sch_netem', () => {
  const e = parseExperiment(experiment('kind: netem, target: api, delay: 50ms, duration: 2s'), 'n.yaml');
  const refusal = (runtime: 'local' | 'sim' | 'swarm' | 'docker'): SpecError['issues'][number] => {
    try {
      refuseOn(runtimePlugin(runtime), e, 'n.yaml');
    } catch (err) {
      assert.ok(err instanceof SpecError, String(err));
      return err.issues[0]!;
    }
    assert.fail(`${runtime} accepted netem`);
  };
  for (const r of ['local', 'sim'] as const) {
    const i = refusal(r);
    assert.equal(i.path, 'schedule.trigger.kind');
    assert.match(
      i.message,
      new RegExp(
        `the ${r} runtime cannot apply a netem trigger \\(it acts on a container's network interface`,
      ),
    );
  }
  assert.match(
    refusal('swarm').message,
    /a task's container may run on another node; use the docker runtime/,
  );
  // The docker runtime asks the kernel (a fake verdict here; this machine's own below).
  refuseNetem(e, 'n.yaml', () => undefined);
  assert.throws(
    () => refuseNetem(e, 'n.yaml', () => 'this kernel has no sch_netem module (…)'),
    (err: unknown) =>
      err instanceof SpecError &&
      err.issues[0]!.file === 'n.yaml' &&
      err.issues[0]!.path === 'schedule.trigger.kind' &&
      /^netem: this kernel has no sch_netem module/.test(err.issues[0]!.message),
  );
});

// This machine's kernel, for real: the probe runs tc in a throwaway network namespace.
const loaded = existsSync('/sys/module/sch_netem');
test(
  'this machine: sch_netem is detected as missing, and the docker runtime refuses a netem run before it starts, naming the module',
  { skip: loaded ? 'this kernel has sch_netem loaded: the missing case cannot be shown here' : false },
  () => {
    const why = netemMissing();
    if (why === undefined) return; // present, loadable on demand: nothing to refuse
    assert.match(
      why,
      /^this kernel has no sch_netem module \(\/sys\/module\/sch_netem is absent, and `unshare .*tc qdisc add dev lo root netem delay 1ms` answered "[^"]*unknown[^"]*"\)/i,
    );
    const e = parseExperiment(experiment('kind: netem, target: api, loss: 5%, duration: 2s'), 'real.yaml');
    assert.throws(
      () => refuseOn(runtimePlugin('docker'), e, 'real.yaml'),
      (err: unknown) =>
        err instanceof SpecError &&
        err.issues[0]!.path === 'schedule.trigger.kind' &&
        /^netem: this kernel has no sch_netem module/.test(err.issues[0]!.message),
    );
  },
);
