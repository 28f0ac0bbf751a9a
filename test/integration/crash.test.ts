import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { processState } from '../helpers/procState.js';

// Undo that survives anything: the orchestrator is killed with SIGKILL in the middle of a
// trigger, and `metabench lab reset` (as any next command would) undoes the fault from the
// journal on disk and stops the lab processes the dead orchestrator left behind.

interface Topology {
  components: { name: string; pid: number }[];
  links?: { proxy?: { api: string; name: string } }[];
}

function gone(pid: number): boolean {
  const st = processState(pid);
  return st === null || st === 'Z';
}

/** Starts a run and SIGKILLs it once its first trigger is applied; returns its lab topology. */
async function killMidTrigger(name: string, body: string, state: string): Promise<Topology> {
  const dir = tempDir(`crash-${name}`);
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, `name: ${name}\n${body}`);
  const out = join(dir, 'out');
  const run = startCli(['run', '--any-scale', file, '--out', out], { METABENCH_STATE_DIR: state });
  await waitFor('the trigger to be applied', () => / applied at /.test(run.stderrSoFar()), 60_000);
  const topo = (JSON.parse(readFileSync(join(out, 'run-1/manifest.json'), 'utf8')) as { topology: Topology })
    .topology;
  assert.ok(readdirSync(join(state, 'journal')).length > 0, 'the fault is in the journal before the kill');
  run.child.kill('SIGKILL');
  await run.done;
  return topo;
}

test('SIGKILL of the orchestrator during a pause: lab reset continues the frozen api, and it leaves no process behind', async () => {
  const state = tempDir('crash-state');
  const topo = await killMidTrigger(
    'crash-pause',
    `lab: { api: { workers: 4, work: { dist: constant, mean: 5ms } } }
load: { rate: 50/s }
client: { timeout: 500ms }
schedule: { warmup: 0s, baseline: 2s, trigger: { kind: pause, target: api, duration: 60s }, observe: 5s }
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
    state,
  );
  const api = topo.components.find((c) => c.name === 'api')!.pid;
  assert.equal(processState(api), 'T', 'the api is still frozen after the orchestrator died');

  const r = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(r.code, 0, r.stderr);
  // It says what it undid, once, and nothing that contradicts it.
  assert.equal(
    r.stdout,
    `lab reset: undid resume api (pid ${api}): sent SIGCONT to pid ${api}\n` +
      `lab reset: undid stop the lab (api): continue: sent SIGCONT to pids ${api}; kill: sent SIGKILL to pids ${api}\n` +
      'lab reset: undid 2 actions left by an earlier run (faults, labs); nothing is left applied\n',
  );
  assert.doesNotMatch(r.stderr, /undid/);
  // Continued, it is no longer stopped; its parent is gone, so it exits as it was told to.
  await waitFor('the api to run again and exit', () => processState(api) !== 'T' && gone(api), 10_000);
  assert.deepEqual(readdirSync(join(state, 'journal')), [], 'the journal is empty');
  const again = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(
    again.stdout,
    'lab reset: nothing to undo (no fault was left applied by an earlier run)\n',
    'a second reset has nothing to undo',
  );
});

test('SIGKILL during a latency trigger on a link: lab reset leaves no toxic, and stops Redis and Postgres', async () => {
  const state = tempDir('crash-state');
  const topo = await killMidTrigger(
    'crash-latency',
    `lab:
  api: { workers: 4, work: { dist: constant, mean: 1ms }, requestTimeout: 400ms }
  cache: { ttl: 1h, prewarm: true }
  db: { keys: 50, pool: 2, query: { dist: constant, mean: 5ms } }
load: { rate: 50/s, mix: [{ name: read, share: 100%, key: { dist: uniform, keys: 50 } }] }
client: { timeout: 500ms }
schedule:
  warmup: 0s
  baseline: 2s
  trigger: { kind: latency, link: redis, latency: 200ms, duration: 60s }
  observe: 5s
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
    state,
  );
  const pid = (n: string): number => topo.components.find((c) => c.name === n)!.pid;
  const [redis, postgres] = [pid('redis'), pid('postgres')];
  assert.ok(!gone(redis) && !gone(postgres), 'Redis and Postgres outlive the killed orchestrator');
  const journal = readFileSync(join(state, 'journal', readdirSync(join(state, 'journal'))[0]!), 'utf8');
  const dataDir = (/"path": "([^"]+)"/.exec(journal) ?? [])[1];
  assert.ok(dataDir && existsSync(dataDir), `the journal names Postgres's data directory: ${dataDir}`);
  const proxyApi = topo.links![0]!.proxy!.api;

  const r = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^lab reset: undid remove toxic metabench_0_latency from link redis/m);
  assert.match(r.stdout, /^lab reset: undid stop the lab/m);
  await waitFor('Redis and Postgres to be stopped', () => gone(redis) && gone(postgres), 15_000);
  assert.ok(!existsSync(dataDir), 'the data directory is removed');
  // The proxy died with its orchestrator, or answers with no toxic left.
  const left = await request(`${proxyApi}/proxies/redis/toxics`)
    .then(async (res) => (await res.body.json()) as unknown[])
    .catch(() => []);
  assert.deepEqual(left, []);
  assert.deepEqual(readdirSync(join(state, 'journal')), []);
});

test('SIGKILL during a latency trigger on link api: lab reset removes the toxic from the clients’ link and stops the api and the fault proxy', async () => {
  const state = tempDir('crash-state');
  const topo = await killMidTrigger(
    'crash-api-link',
    `lab: { api: { workers: 4, work: { dist: constant, mean: 1ms } } }
load: { rate: 50/s }
client: { timeout: 500ms }
schedule: { warmup: 0s, baseline: 2s, trigger: { kind: latency, link: api, latency: 200ms, duration: 60s }, observe: 5s }
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
    state,
  );
  const api = topo.components.find((c) => c.name === 'api')!.pid;
  const link = topo.links!.find((l) => l.proxy?.name === 'api')!;
  assert.ok(link, 'the clients reach the api through its link');
  const toxics = `${link.proxy!.api}/proxies/api/toxics`;

  const r = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^lab reset: undid remove toxic metabench_0_latency from link api/m);
  assert.match(r.stdout, /^lab reset: undid stop the lab/m);
  await waitFor('the api to be stopped', () => gone(api), 10_000);
  // The proxy is stopped with the lab, or answers with no toxic left.
  const left = await request(toxics)
    .then(async (res) => (await res.body.json()) as unknown[])
    .catch(() => []);
  assert.deepEqual(left, []);
  assert.deepEqual(readdirSync(join(state, 'journal')), []);
});

test('Ctrl-C during a pause, twice (forced): each names `metabench lab reset` and what is still applied, and lab reset then undoes it', async () => {
  const state = tempDir('crash-state');
  const dir = tempDir('crash-sigint');
  const file = join(dir, 'sigint-pause.yaml');
  writeFileSync(
    file,
    `name: sigint-pause
lab: { api: { workers: 4, work: { dist: constant, mean: 5ms } } }
load: { rate: 50/s }
client: { timeout: 500ms }
schedule: { warmup: 0s, baseline: 2s, trigger: { kind: pause, target: api, duration: 60s }, observe: 5s }
recovery: { within: 1x, tolerance: 10%, window: 1s, hold: 1s }
`,
  );
  const run = startCli(['run', '--any-scale', file, '--out', join(dir, 'out')], {
    METABENCH_STATE_DIR: state,
  });
  await waitFor('the trigger to be applied', () => / applied at /.test(run.stderrSoFar()), 60_000);
  run.child.kill('SIGINT');
  await waitFor(
    'the first Ctrl-C to be answered',
    () => /SIGINT: still applied/.test(run.stderrSoFar()),
    10_000,
  );
  // Forced before winding down has undone the pause: what is left, and the command that undoes it.
  run.child.kill('SIGINT');
  const r = await run.done;
  assert.equal(r.code, 11, r.stderr);
  assert.match(
    r.stderr,
    /SIGINT: still applied: [^\n]*resume api \(pid \d+\)[^\n]*`metabench lab reset` undoes them/,
  );
  const forced = /SIGINT: forced exit; (.*)\n/.exec(r.stderr)?.[1] ?? '';
  const reset = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(reset.code, 0, reset.stderr);
  if (/nothing was left applied/.test(forced)) {
    // Winding down undid everything (the pause within milliseconds) before the second
    // Ctrl-C reached it: the forced exit then says so, and lab reset finds nothing to undo.
    assert.match(r.stderr, /pause api undone at/);
    assert.doesNotMatch(reset.stdout, /undid/);
  } else {
    assert.match(forced, /left applied: .*stop the lab.*Run `metabench lab reset` to undo/, r.stderr);
    assert.match(reset.stdout, /lab reset: undid stop the lab/);
  }
  assert.deepEqual(readdirSync(join(state, 'journal')), []);
});
