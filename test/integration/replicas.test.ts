import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { localLabConfig } from '../../orchestrator/lab/labConfig.js';
import { LocalLab } from '../../orchestrator/lab/local/LocalLab.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { runUndo } from '../../orchestrator/trigger/journal.js';
import { REPO, runCli, tempDir, waitFor } from '../helpers/cli.js';
import { readEvents, readSeries, sum } from '../helpers/experiment.js';
import { processState } from '../helpers/procState.js';

// lab.api.replicas on the local runtime: real api processes, each scraped on its own,
// a trigger on one replica (test/fixtures/experiments/replicas-pause.yaml).

const FIXTURE = join(REPO, 'test/fixtures/experiments/replicas-pause.yaml');

/** Gone, or a zombie its parent has yet to reap. */
function gone(pid: number): boolean {
  const s = processState(pid);
  return s === null || s === 'Z' || s === 'X';
}

test('two local api replicas, round-robin: both serve, a pause of api[1] stops only its completions, nothing is left after', async () => {
  const dir = tempDir('replicas-run');
  const out = join(dir, 'out');
  const state = tempDir('replicas-state');
  const r = await runCli(['run', '--any-scale', FIXTURE, '--out', out, '--quiet'], {
    METABENCH_STATE_DIR: state,
  });
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as RunSummary;
  const rows = readSeries(out);
  const cols = Object.keys(rows[0]!);

  // Both replica processes served traffic, half each while both ran.
  // (not second 6: replica 1's scrape at 7 s, when the pause begins, may go unanswered)
  const base = [2, 6] as const;
  const r0 = sum(rows, 'api0_received', ...base);
  const r1 = sum(rows, 'api1_received', ...base);
  assert.ok(r0 > 50 && r1 > 50, `baseline received: replica 0 ${r0}, replica 1 ${r1}`);
  assert.ok(Math.abs(r0 - r1) <= 0.1 * (r0 + r1), `round-robin halves: ${r0} vs ${r1}`);
  assert.ok(
    Math.abs(sum(rows, 'server_received', ...base) - (r0 + r1)) < 1e-9,
    'the summed column is the replicas’ sum while both answer',
  );
  // Per-process columns per replica, none for a single api.
  for (const c of [
    'proc_api0_cpu',
    'proc_api1_cpu',
    'api0_completed',
    'api1_queue_depth',
    'api1_busy_workers',
  ])
    assert.ok(cols.includes(c), `timeseries.csv has ${c}`);
  assert.ok(!cols.includes('proc_api_cpu'));
  // The client recorded which replica served each attempt.
  const replicas = new Set(
    readEvents(out).flatMap((e) => (e['replica'] !== undefined ? [e['replica']] : [])),
  );
  assert.deepEqual([...replicas].sort(), [0, 1]);

  // During the pause (the whole seconds inside it, but its last: a scrape at its end may
  // already be answered), replica 1 answers no scrape; replica 0 keeps completing.
  const t = s.triggers[0]!;
  assert.equal(t.target, 'api[1]');
  assert.equal(t.error, undefined);
  assert.equal(t.undoError, undefined);
  const inside = rows.filter(
    (x) => (x['t_s'] as number) >= Math.ceil(t.startS) && (x['t_s'] as number) < Math.floor(t.endS) - 1,
  );
  assert.ok(inside.length >= 1, `seconds inside the pause: ${t.startS}–${t.endS}`);
  for (const x of inside) {
    assert.ok(
      x['api1_completed'] === null || x['api1_completed'] === 0,
      `replica 1 at ${x['t_s']} s: ${x['api1_completed']}`,
    );
    assert.ok((x['api0_completed'] as number) >= 10, `replica 0 at ${x['t_s']} s: ${x['api0_completed']}`);
    // The sum is over the replicas that answered: replica 0 alone.
    assert.equal(x['server_completed'], x['api0_completed']);
  }
  // After the pause replica 1 serves again.
  assert.ok(sum(rows, 'api1_completed', Math.ceil(t.endS) + 1, Math.ceil(t.endS) + 5) > 40);

  // Nothing is left: no api process, no fault in the journal.
  const m = JSON.parse(readFileSync(join(out, 'run-1/manifest.json'), 'utf8')) as {
    topology: { components: { name: string; replicas?: { url: string; pid: number | null }[] }[] };
  };
  const api = m.topology.components.find((c) => c.name === 'api')!;
  assert.equal(api.replicas?.length, 2);
  assert.notEqual(api.replicas![0]!.url, api.replicas![1]!.url);
  for (const rep of api.replicas!) assert.ok(rep.pid !== null && gone(rep.pid), `api pid ${rep.pid} is gone`);
  const journal = join(state, 'journal');
  assert.deepEqual(existsSync(journal) ? readdirSync(journal) : [], [], 'no fault left in the journal');
});

test('LocalLab with two replicas: pause, kill and start act on the named replica; the journal’s recipe resumes exactly it', async () => {
  const e = parseExperiment(readFileSync(FIXTURE, 'utf8'), FIXTURE);
  const lab = new LocalLab(localLabConfig(e, { seed: 1 }));
  const health = async (url: string): Promise<number | string> => {
    try {
      const res = await request(`${url}/health`, { headersTimeout: 500, bodyTimeout: 500 });
      await res.body.dump();
      return res.statusCode;
    } catch (err) {
      return (err as Error).name;
    }
  };
  let pids: number[] = [];
  try {
    await lab.up();
    const apis = lab.processes().filter((p) => p.component === 'api');
    assert.deepEqual(
      apis.map((p) => p.replica),
      [0, 1],
    );
    pids = apis.map((p) => p.pid);
    const [u0, u1] = lab.apiUrls;
    assert.equal(lab.apiUrl, u0);
    assert.notEqual(u0, u1);
    assert.deepEqual([await health(u0!), await health(u1!)], [200, 200]);

    // The recipe is journaled before the pause: it names replica 1's pid alone.
    const recipe = lab.pauseUndoRecipe('api[1]');
    assert.equal(recipe.kind, 'signal');
    assert.equal(recipe.kind === 'signal' && recipe.pid, pids[1]);
    await lab.pause('api[1]');
    // SIGSTOP takes effect when the kernel next schedules the process.
    await waitFor('replica 1 stopped', () => processState(pids[1]!) === 'T', 5000);
    assert.notEqual(processState(pids[0]!), 'T');
    assert.equal(await health(u0!), 200);
    assert.notEqual(await health(u1!), 200);
    // A crashed orchestrator's journal continues exactly that replica.
    assert.match(runUndo(recipe), /resume api\[1\].*sent SIGCONT/);
    await waitFor('replica 1 continued', () => processState(pids[1]!) !== 'T', 5000);
    assert.equal(await health(u1!), 200);

    // `api` is every replica: its recipe continues both.
    const all = lab.pauseUndoRecipe('api');
    assert.equal(all.kind, 'signals');
    assert.deepEqual(all.kind === 'signals' && all.targets.map((x) => x.pid), pids);

    // Kill replica 0 and start it again on its address; replica 1 is untouched.
    await lab.kill('api[0]');
    assert.ok(gone(pids[0]!));
    assert.notEqual(await health(u0!), 200);
    assert.equal(await health(u1!), 200);
    await lab.start('api[0]');
    assert.equal(lab.apiUrls[0], u0, 'restarted on its port');
    assert.equal(await health(u0!), 200);
    const after = lab.processes().filter((p) => p.component === 'api');
    assert.notEqual(after[0]!.pid, pids[0]);
    assert.equal(after[1]!.pid, pids[1]);
    pids = after.map((p) => p.pid);
    await assert.rejects(lab.pause('api[2]'), /api\[0\] to api\[1\]/);
  } finally {
    await lab.down();
  }
  for (const pid of pids) assert.ok(gone(pid), `pid ${pid} is gone after down`);
});
