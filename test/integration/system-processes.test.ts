import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { runtimePlugin } from '../../orchestrator/lab/RuntimePlugin.js';
import type { Target } from '../../orchestrator/lab/Lab.js';
import { runExperiment } from '../../orchestrator/run/runExperiment.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { BACK, FRONT } from '../helpers/systemFixture.js';
import { readEvents } from '../../bench/record/eventLog.js';

// Issue 34, point 1 (acceptance): `system: { processes }` on the local runtime. The two
// services written only for the test (a front with a fixed pool of 4 that calls a back
// whose address it reads from BACK_ADDR) are started by metabench, the back behind its
// fault proxy on the declared link (BACK_ADDR set to the proxy's address); a latency toxic
// on that link and a pause of the entry component are applied and undone, the run gets a
// verdict, and nothing metabench started is left running afterwards.

registerRuntimes();

/** A port free on 127.0.0.1 now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

/** The process groups alive now (the fifth field of /proc/PID/stat). */
function liveGroups(): Set<number> {
  const out = new Set<number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (f[0] !== 'Z') out.add(Number(f[2]));
    } catch {
      /* gone */
    }
  }
  return out;
}

test('system: { processes } with a link and a pause: the proxy on the declared link, both undone, a verdict, nothing left running', async () => {
  const dir = tempDir('system-processes');
  const [frontPort, backPort] = [await freePort(), await freePort()];
  const out = join(dir, 'out');
  const state = join(dir, 'state');
  const e = parseExperiment(
    `
name: system-processes
system:
  processes:
    - { name: back, command: 'node ${BACK}', env: { PORT: "${backPort}", BACK_DELAY_MS: "5" }, port: ${backPort}, health: /health }
    - { name: front, command: 'node ${FRONT}', env: { PORT: "${frontPort}", WORKERS: "4" }, port: ${frontPort}, health: /health }
  entry: front
  path: /work
  links: [{ from: front, to: back, env: BACK_ADDR }]
  metrics: { url: http://127.0.0.1:${frontPort}/metrics, received: front_requests_received_total, queue: front_queue_depth }
load: { arrival: constant, rate: 40/s }
client: { timeout: 5s, retry: { policy: none } }
schedule:
  warmup: 1s
  baseline: 4s
  triggers:
    - { kind: latency, link: back, latency: 50ms, duration: 3s }
    - { kind: pause, target: front, duration: 2s, at: 4s }
  observe: 6s
recovery: { within: 3x, tolerance: 20%, window: 1s, hold: 1s }
seed: 9
`,
    join(dir, 'system-processes.yaml'),
  );
  const before = process.env.METABENCH_STATE_DIR;
  process.env.METABENCH_STATE_DIR = state;
  try {
    await runExperiment(e, { scale: 1, out, quiet: true, stop: new AbortController().signal });
  } finally {
    if (before === undefined) delete process.env.METABENCH_STATE_DIR;
    else process.env.METABENCH_STATE_DIR = before;
  }
  const journal = join(state, 'journal');
  assert.deepEqual(existsSync(journal) ? readdirSync(journal) : [], [], 'the journal is empty after the run');

  // The topology: metabench's components, and the link through the fault proxy.
  const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
    topology: {
      components: { name: string; url: string; pid: number | null }[];
      links: { from: string; to: string; address: string; proxy: { upstream: string } }[];
    };
  };
  const t = manifest.topology;
  assert.deepEqual(
    t.components.map((c) => [c.name, c.url]),
    [
      ['back', `http://127.0.0.1:${backPort}`],
      ['front', `http://127.0.0.1:${frontPort}`],
    ],
  );
  assert.equal(t.links.length, 1);
  assert.equal(t.links[0]!.proxy.upstream, `127.0.0.1:${backPort}`);
  assert.match(t.links[0]!.address, /^127\.0\.0\.1:\d+$/);
  assert.notEqual(
    t.links[0]!.address,
    `127.0.0.1:${backPort}`,
    'the front reaches the back through the proxy',
  );

  // Both triggers applied at their time and undone without error.
  const s = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as RunSummary;
  assert.deepEqual(
    s.triggers.map((x) => [x.kind, x.target, x.error, x.undoError]),
    [
      ['latency', 'link:back', undefined, undefined],
      ['pause', 'front', undefined, undefined],
    ],
  );
  const events = (
    readEvents(join(out, 'run-1')) as unknown as ({ action: string; kind: string } & { e: string })[]
  ).filter((e) => e.e === 'trigger');
  assert.deepEqual(
    events.map((x) => `${x.action} ${x.kind}`),
    ['apply latency', 'undo latency', 'apply pause', 'undo pause'],
  );
  // The latency was on the front's way to the back: responses took 50 ms more during it.
  const csv = readFileSync(join(out, 'run-1', 'timeseries.csv'), 'utf8')
    .trim()
    .split('\n');
  const head = csv[0]!.split(',');
  const p50 = csv.slice(1).map((l) => Number(l.split(',')[head.indexOf('response_p50_ms')]));
  assert.ok(Math.max(...p50.slice(6, 8)) > 50, `p50 during the latency: ${p50.slice(5, 9).join(', ')}`);
  assert.ok(Math.min(...p50.slice(2, 5)) < 40, `p50 in the baseline: ${p50.slice(2, 5).join(', ')}`);
  // A verdict.
  assert.ok(s.validity.valid, `invalid run: ${s.warnings.join('; ')}`);
  assert.match(s.outcome, /^recovered/, `${s.outcome}: ${s.outcomeReason}`);

  // Nothing left running: no process of the components' groups, nobody on their ports.
  const groups = t.components.map((c) => c.pid).filter((p): p is number => p !== null);
  assert.equal(groups.length, 2);
  const live = liveGroups();
  assert.deepEqual(
    groups.filter((g) => live.has(g)),
    [],
    'a component’s process group is still alive',
  );
  for (const port of [frontPort, backPort])
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), TypeError, `port ${port} still answers`);
});

test('SIGKILL of metabench while a component is paused: its guard stops every process of the system, and lab reset finds nothing left to stop', async () => {
  const dir = tempDir('system-processes-kill');
  const state = join(dir, 'state');
  const [frontPort, backPort] = [await freePort(), await freePort()];
  const file = join(dir, 'system-kill.yaml');
  writeFileSync(
    file,
    `name: system-kill
system:
  processes:
    - { name: back, command: 'node ${BACK}', env: { PORT: "${backPort}" }, port: ${backPort}, health: /health }
    - { name: front, command: 'node ${FRONT}', env: { PORT: "${frontPort}" }, port: ${frontPort}, health: /health }
  entry: front
  path: /work
  links: [{ from: front, to: back, env: BACK_ADDR }]
load: { arrival: constant, rate: 20/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 0s, baseline: 2s, trigger: { kind: pause, target: front, duration: 60s }, observe: 5s }
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
  );
  const out = join(dir, 'out');
  const run = startCli(['run', '--any-scale', file, '--out', out], { METABENCH_STATE_DIR: state });
  await waitFor('the pause to be applied', () => / applied at /.test(run.stderrSoFar()), 60_000);
  const topo = (
    JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
      topology: { components: { name: string; pid: number | null }[] };
    }
  ).topology;
  const groups = topo.components.map((c) => c.pid!);
  assert.equal(groups.length, 2);
  assert.ok(
    groups.every((g) => liveGroups().has(g)),
    'both components run before the kill',
  );
  run.child.kill('SIGKILL');
  await run.done;
  // No next command needed: each guard sees metabench gone (its stdin closes) and stops its group.
  await waitFor('the components to be stopped', () => !groups.some((g) => liveGroups().has(g)), 20_000);
  for (const port of [frontPort, backPort])
    await assert.rejects(fetch(`http://127.0.0.1:${port}/health`), TypeError, `port ${port} still answers`);
  // The journal still holds the pause's undo and the system's teardown; lab reset runs them harmlessly.
  const r = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /undid resume front/);
  assert.match(r.stdout, /undid stop your system \(back, front, faultproxy\)/);
  assert.deepEqual(readdirSync(join(state, 'journal')), []);
});

test('kill, stop and start of a component of your own system: its group goes, its command runs again on its port, behind the same link', async () => {
  const dir = tempDir('system-processes-kill-stop');
  const [frontPort, backPort] = [await freePort(), await freePort()];
  const e = parseExperiment(
    `name: system-kill-stop
system:
  processes:
    - { name: back, command: 'node ${BACK}', env: { PORT: "${backPort}" }, port: ${backPort}, health: /health }
    - { name: front, command: 'node ${FRONT}', env: { PORT: "${frontPort}" }, port: ${frontPort}, health: /health }
  entry: front
  path: /work
  links: [{ from: front, to: back, env: BACK_ADDR }]
load: { arrival: constant, rate: 20/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 0s, baseline: 2s, trigger: { kind: kill, target: back, duration: 2s }, observe: 5s }
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
    join(dir, 'k.yaml'),
  );
  const lab = runtimePlugin('local').lab!(e, { seed: 1, logFile: join(dir, 'lab.log') });
  const work = async () => (await fetch(`http://127.0.0.1:${frontPort}/work`)).status;
  const group = (name: string) => lab.topology().components.find((c) => c.name === name)!.pid!;
  try {
    await lab.up();
    assert.equal(await work(), 200, 'the front reaches the back through the link');
    for (const [how, name] of [
      ['kill', 'back'],
      ['stop', 'front'],
    ] as const) {
      const before = group(name);
      await (how === 'kill' ? lab.kill(name as Target) : lab.stop(name as Target));
      await waitFor(`${how} ${name}: its process group gone`, () => !liveGroups().has(before), 5000);
      if (name === 'back') assert.equal(await work(), 502, 'the front answers 502 without its back');
      await lab.start(name as Target);
      assert.notEqual(group(name), before, `${name} runs again, a new process group`);
      assert.equal(await work(), 200, `after ${how} and start of ${name}, the front works through the link`);
    }
  } finally {
    await lab.down();
  }
  assert.deepEqual(
    lab.processes().map((p) => p.component),
    [],
    'nothing runs after down',
  );
});
