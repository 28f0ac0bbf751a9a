import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type Docker from 'dockerode';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { ComposeSystemLab } from '../../orchestrator/lab/engine/ComposeSystemLab.js';
import { PROXY_SERVICE } from '../../orchestrator/lab/engine/composeSystem.js';
import { dockerClient, inspectContainer } from '../../orchestrator/lab/engine/engine.js';
import { LinkClient } from '../../orchestrator/lab/links.js';
import { Journal, runUndo } from '../../orchestrator/trigger/journal.js';
import { toxicTrigger } from '../../orchestrator/trigger/link.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { REPO, runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';
import { watchComposeEvents } from '../helpers/dockerEvents.js';
import { OFFLINE_ENV_FILE, offlineImagesMissing } from '../helpers/offlineImages.js';
import { within } from '../../foundation/within.js';

// A compose file that is not the lab's (test/fixtures/system-compose: `front`, a fixed pool of
// 4, calls `back` at the address in BACK_URL) as the system under test on the Docker engine:
// the fault proxy sits on the declared link (front's BACK_URL names the proxy, the proxy's link
// `back` names back:9000), a latency toxic on it slows the front's answers by about the toxic,
// a pause of `front` is applied and undone (the engine's events, the container's state), each
// fault journaled first, and after down nothing of the project is left. Skipped, with the
// reason, where no engine answers or the offline images are not built.

const FIXTURE = join(REPO, 'test', 'fixtures', 'system-compose', 'compose.yml');
const PROJECT = 'metabench-syscompose';
const NODE_IMAGE = `metabench-offline/node:${process.versions.node}`;

async function whyNot(docker: Docker): Promise<string | undefined> {
  try {
    await docker.ping();
  } catch (err) {
    return `no Docker engine answers (${(err as Error).message})`;
  }
  if (
    spawnSync('docker', ['compose', 'version'], { stdio: 'ignore' }).status !== 0 &&
    spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status !== 0
  )
    return 'neither `docker compose` nor `docker-compose` is installed';
  const missing = await offlineImagesMissing(docker);
  if (missing) return missing;
  try {
    await docker.getImage(NODE_IMAGE).inspect();
  } catch {
    return `${NODE_IMAGE} is not built: run scripts/build-offline-images.sh`;
  }
  return undefined;
}

/** Milliseconds of each of `n` GETs of the front's /work, one after another, sorted. */
async function times(url: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const r = await fetch(`${url}/work`);
    assert.equal(await r.text(), 'front: back');
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

const median = (xs: number[]): number => xs[Math.floor(xs.length / 2)]!;

/** What is left of a compose project on the engine: containers, networks, volumes. */
function leftovers(project = PROJECT): string[] {
  const label = `label=com.docker.compose.project=${project}`;
  const ls = (args: string[]): string[] =>
    spawnSync('docker', args, { encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
  return [
    ...ls(['ps', '-a', '--filter', label, '--format', 'container {{.Names}}']),
    ...ls(['network', 'ls', '--filter', label, '--format', 'network {{.Name}}']),
    ...ls(['volume', 'ls', '--filter', label, '--format', 'volume {{.Name}}']),
  ];
}

/** `metabench run` of a test/fixtures/system-compose experiment on the docker runtime, into `out`. */
function runFixture(file: string, out: string) {
  return runCli(
    [
      'run',
      join('test', 'fixtures', 'system-compose', file),
      '--runtime',
      'docker',
      '--env-file',
      OFFLINE_ENV_FILE,
      '--out',
      out,
    ],
    { SYSTEM_COMPOSE_NODE_IMAGE: NODE_IMAGE },
  );
}

test('system.compose: a fault proxy on the named link, a latency toxic and a pause of the entry, journaled, nothing left after down', async (t) => {
  const docker = dockerClient();
  const why = await whyNot(docker);
  if (why) {
    t.diagnostic(`skipped: ${why}`);
    t.skip(why);
    return;
  }
  // The journal's docker recipes run through the runtime that owns them.
  registerRuntimes();
  process.env.SYSTEM_COMPOSE_NODE_IMAGE = NODE_IMAGE;
  const journalDir = tempDir('syscompose-journal');
  const journal = new Journal(journalDir);
  const journaled = (): string[] =>
    existsSync(join(journalDir, `${process.pid}.json`))
      ? (
          JSON.parse(readFileSync(join(journalDir, `${process.pid}.json`), 'utf8')) as {
            entries: { undo: { kind: string } }[];
          }
        ).entries.map((e) => e.undo.kind)
      : [];
  const lab = new ComposeSystemLab({
    file: FIXTURE,
    project: PROJECT,
    entry: { service: 'front', port: 8080, health: '/health' },
    links: [{ name: 'back', service: 'back', port: 9000, env: 'BACK_URL', from: 'front' }],
    metrics: { service: 'front', port: 9100, path: '/metrics' },
    envFile: OFFLINE_ENV_FILE,
    logFile: join(tempDir('syscompose-log'), 'lab.log'),
  });
  let stopEvents: (() => void) | undefined;
  try {
    await lab.up();
    // The proxy sits on the link: front reads its address, the proxy forwards to back.
    const front = lab.services().get('front')!;
    const env = (await docker.getContainer(front.id).inspect()).Config.Env;
    assert.ok(env.includes(`BACK_URL=http://${PROXY_SERVICE}:21000`), env.join(' '));
    assert.ok(env.includes('POOL=4'), 'the file’s other variables are kept');
    const link = await new LinkClient(lab.faultProxyApi!).get('back');
    assert.deepEqual([link.upstream, link.enabled], ['back:9000', true]);
    assert.match(lab.apiUrl, /^http:\/\/127\.0\.0\.1:\d+$/);

    // The metrics endpoint inside the project (front's port 9100), published and scraped from here.
    await times(lab.apiUrl, 5); // connections and JIT warm
    const text = await lab.scrapeText('api', 2000);
    assert.match(text, /^front_work_received_total 5$/m, text);
    assert.match(text, /^front_work_completed_total 5$/m, text);

    // A latency toxic of 200 ms on the link: each answer of front waits for back's, so it slows by about that.
    const base = median(await times(lab.apiUrl, 15));
    const toxic = toxicTrigger('latency', 'back', {
      name: 'latency_test',
      type: 'latency',
      attributes: { latency: 200, jitter: 0 },
    });
    journal.record({ id: 'toxic', appliedAt: new Date().toISOString(), undo: toxic.undoRecipe(lab) });
    await toxic.apply(lab);
    assert.deepEqual(journaled(), ['http']);
    const slowed = median(await times(lab.apiUrl, 10));
    await toxic.undo(lab);
    journal.clear('toxic');
    const after = median(await times(lab.apiUrl, 15));
    t.diagnostic(
      `median front answer: ${base.toFixed(1)} ms, ${slowed.toFixed(1)} ms with the toxic, ${after.toFixed(1)} ms after`,
    );
    // Against the quicker of the two toxic-free medians (a loaded machine slows one now and then).
    const added = slowed - Math.min(base, after);
    assert.ok(added >= 180 && added <= 450, `the toxic adds ${added.toFixed(1)} ms (200 expected)`);
    assert.ok(
      after < slowed - 150,
      `after the toxic: ${after.toFixed(1)} ms, with it ${slowed.toFixed(1)} ms`,
    );

    // A pause of front, applied and undone, as the engine saw it; then once more, undone by the journal's recipe alone.
    const events = await watchComposeEvents(docker, PROJECT, ['pause', 'unpause'], 'front');
    stopEvents = () => events.stop();
    journal.record({ id: 'pause', appliedAt: new Date().toISOString(), undo: lab.pauseUndoRecipe('front') });
    await lab.pause('front');
    assert.deepEqual(journaled(), ['docker']);
    assert.equal((await inspectContainer(docker, front.id)).state, 'paused');
    await assert.rejects(within(500, (signal) => fetch(`${lab.apiUrl}/health`, { signal })));
    await lab.resume('front');
    journal.clear('pause');
    assert.equal((await inspectContainer(docker, front.id)).state, 'running');
    await lab.pause('front');
    assert.match(
      runUndo(lab.pauseUndoRecipe('front')),
      /resume front \(docker unpause .*front.*\): docker unpause/,
    );
    assert.equal((await inspectContainer(docker, front.id)).state, 'running');
    assert.equal((await fetch(`${lab.apiUrl}/health`)).status, 200);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(events.stop(), ['front pause', 'front unpause', 'front pause', 'front unpause']);
  } finally {
    stopEvents?.();
    await lab.down();
  }
  assert.deepEqual(leftovers(), [], 'nothing of the project is left');
});

test('system.compose: an experiment on the compose file runs on --runtime docker to a verdict, and removes its project', async (t) => {
  const docker = dockerClient();
  const why = await whyNot(docker);
  if (why) {
    t.diagnostic(`skipped: ${why}`);
    t.skip(why);
    return;
  }
  // test/fixtures/system-compose/experiment.yaml: front paused for 2 s (its own project, metabench-syscompose-run).
  const out = tempDir('syscompose-run');
  const events = await watchComposeEvents(docker, 'metabench-syscompose-run', ['pause', 'unpause'], 'front');
  // The event stream is closed on every path (an open one would keep the test process alive).
  let seen: string[];
  try {
    const r = await runFixture('experiment.yaml', out);
    assert.equal(r.code, 0, r.stderr);
    const summary = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      runtime: string;
      validity: { valid: boolean };
      outcome: string;
      warnings: string[];
      triggers: { kind: string; target: string; startS: number; endS: number }[];
    };
    t.diagnostic(`outcome ${summary.outcome}, valid ${summary.validity.valid}`);
    assert.equal(summary.runtime, 'docker');
    // A verdict (exit 0 says the run was valid): nothing sustains the backlog the pause left, so it recovers.
    assert.equal(summary.validity.valid, true);
    assert.equal(summary.outcome, 'recovered');
    // The pause of the entry service, applied and undone: in the run's record and as the engine saw it.
    assert.deepEqual(
      summary.triggers.map((x) => [x.kind, x.target]),
      [['pause', 'front']],
    );
    const window = summary.triggers[0]!.endS - summary.triggers[0]!.startS;
    assert.ok(Math.abs(window - 2) < 0.2, `the pause lasted ${window} s`);
    assert.ok(summary.warnings.some((w) => /client-side only/.test(w)));
    // Without a mapping the report says so, and has no server-side figure.
    const report = readFileSync(join(out, 'report.md'), 'utf8');
    assert.ok(report.includes('the amplification is client-side only'), 'the warning is in report.md');
    const row = report.split('\n').find((l) => l.startsWith('| 1 | 5 |'))!;
    assert.equal(row.split('|')[6]!.trim(), 'unmeasured', row);
    await new Promise((res) => setTimeout(res, 300));
  } finally {
    seen = events.stop();
  }
  assert.deepEqual(seen, ['front pause', 'front unpause']);
  const log = readFileSync(join(out, 'run-1', 'lab.log'), 'utf8');
  assert.match(log, /compose up .*compose\.yml as project metabench-syscompose-run/);
  assert.match(log, /compose down -v: project metabench-syscompose-run removed/);
  assert.deepEqual(leftovers('metabench-syscompose-run'), [], 'nothing of the project is left');
});

test('system.compose with system.metrics: the server columns come from a service’s own endpoint inside the project, and the report gives the server-side amplification', async (t) => {
  const docker = dockerClient();
  const why = await whyNot(docker);
  if (why) {
    t.diagnostic(`skipped: ${why}`);
    t.skip(why);
    return;
  }
  // test/fixtures/system-compose/experiment-metrics.yaml: experiment.yaml with front's /metrics on 9100 mapped.
  const out = tempDir('syscompose-metrics');
  const r = await runFixture('experiment-metrics.yaml', out);
  assert.equal(r.code, 0, r.stderr);
  const s = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.validity.valid, true, s.warnings.join('; '));
  assert.equal(s.outcome, 'recovered', `${s.outcome}: ${s.outcomeReason}`);
  assert.ok(
    !s.warnings.some((w) => /client-side only|no server-side metrics/.test(w)),
    s.warnings.join('; '),
  );
  const csv = readFileSync(join(out, 'run-1', 'timeseries.csv'), 'utf8')
    .trim()
    .split('\n');
  const head = csv[0]!.split(',');
  const col = (name: string): string[] => {
    assert.ok(head.includes(name), `${name} in ${head.join(',')}`);
    return csv.slice(1).map((l) => l.split(',')[head.indexOf(name)]!);
  };
  // Seconds 2–6 are the baseline: front received what the client sent (no retries), 100 a second.
  const received = col('server_received').slice(2, 7).map(Number);
  const completed = col('server_completed').slice(2, 7).map(Number);
  t.diagnostic(`baseline received ${received.join(',')}; completed ${completed.join(',')}`);
  for (const xs of [received, completed])
    assert.ok(
      xs.every((x) => x >= 80 && x <= 120),
      xs.join(','),
    );
  // The gauges are mapped: a value each baseline second, the busy workers within the pool of 4.
  // (The queue is not asserted to grow: a paused front reads nothing, so the ~200 requests sent
  // meanwhile wait in the kernel, and on resume it drains them at ~800/s in about 0.25 s, between
  // two 1-second samples; one run measured a largest sample of 33.)
  for (const v of col('server_queue_depth').slice(2, 7)) assert.match(v, /^\d+$/);
  const busy = col('server_busy_workers').slice(2, 7).map(Number);
  assert.ok(
    busy.every((b) => b >= 0 && b <= 4),
    busy.join(','),
  );
  // Paused from 7 s to 9 s: the scrape at 8 s finds front frozen (an empty bucket); on resume its
  // counter carries what it read at once, the requests of the pause with that second's, and over
  // the pause and the 2 s after front received what the client sent.
  const raw = col('server_received');
  assert.equal(raw[7], '', raw.join(','));
  const resumed = Math.max(...raw.slice(8, 11).map(Number));
  assert.ok(resumed > 150, raw.join(','));
  const sent = col('attempts')
    .slice(7, 12)
    .reduce((a, v) => a + Number(v), 0);
  const got = raw.slice(7, 12).reduce((a, v) => a + Number(v), 0);
  t.diagnostic(`received per second ${raw.join(',')}; seconds 7-11: ${got} received, ${sent} sent`);
  assert.ok(Math.abs(got - sent) <= 0.05 * sent, `${got} received, ${sent} sent`);
  // A_s: requests the service received per origin intended, 1 at rest, as the client's A_c.
  t.diagnostic(
    `amplification in the baseline: client ${s.baseline.amplification}, server ${s.baseline.amplificationServer}; after the trigger: client ${s.afterTrigger.amplification}, server ${s.afterTrigger.amplificationServer}`,
  );
  assert.ok(
    s.baseline.amplificationServer !== null && Math.abs(s.baseline.amplificationServer - 1) < 0.1,
    String(s.baseline.amplificationServer),
  );
  assert.ok(s.afterTrigger.amplificationServer !== null);
  const report = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(
    report,
    /server metrics from \/metrics on port 9100 of service front \(received = front_work_received_total/,
  );
  // The baseline's row of the report: amplification (client), then (server), a figure each.
  const row = report.split('\n').find((l) => l.startsWith('| 1 | 5 |'))!;
  const cell = row.split('|')[6]!.trim();
  assert.ok(cell.endsWith('×') && Math.abs(parseFloat(cell) - 1) < 0.1, row);
  assert.deepEqual(leftovers('metabench-syscompose-metrics'), [], 'nothing of the project is left');
});

test('SIGKILL of metabench mid-run: the journal holds the project’s compose-down, and `lab reset` removes every container, network and volume of it', async (t) => {
  const docker = dockerClient();
  const why = await whyNot(docker);
  if (why) {
    t.diagnostic(`skipped: ${why}`);
    t.skip(why);
    return;
  }
  const project = 'metabench-syscompose-run';
  const dir = tempDir('syscompose-kill');
  const state = join(dir, 'state');
  const out = join(dir, 'out');
  const run = startCli(
    [
      'run',
      join('test', 'fixtures', 'system-compose', 'experiment.yaml'),
      '--runtime',
      'docker',
      '--env-file',
      OFFLINE_ENV_FILE,
      '--out',
      out,
    ],
    { SYSTEM_COMPOSE_NODE_IMAGE: NODE_IMAGE, METABENCH_STATE_DIR: state },
  );
  // Killed mid-pause: the project is up and front is paused, both journaled.
  await waitFor('the pause of front to be applied', () => / applied at /.test(run.stderrSoFar()), 180_000);
  const journalFile = join(state, 'journal', `${run.child.pid}.json`);
  const kinds = (
    JSON.parse(readFileSync(journalFile, 'utf8')) as {
      entries: { undo: { kind: string; steps?: { kind: string }[] } }[];
    }
  ).entries.map((e) => [e.undo.kind, ...(e.undo.steps ?? []).map((x) => x.kind)].join(' '));
  assert.deepEqual(kinds, ['steps compose-down remove', 'docker'], 'the project first, then the pause');
  run.child.kill('SIGKILL');
  await run.done;
  const override = /\(override ([^)]+)\)/.exec(readFileSync(join(out, 'run-1', 'lab.log'), 'utf8'))![1]!;
  assert.ok(existsSync(override), 'the override outlives the killed run');
  const left = leftovers(project);
  assert.ok(
    left.filter((l) => l.startsWith('container ')).length >= 3,
    `the project is still up: ${left.join(', ')}`,
  );

  const reset = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(reset.code, 0, reset.stderr);
  t.diagnostic(reset.stdout.trim());
  // The pause is undone first (the last entry first), then the project taken down.
  assert.match(reset.stdout, /lab reset: undid resume front \(docker unpause .*\): docker unpause/);
  assert.match(
    reset.stdout,
    new RegExp(
      `lab reset: undid take compose project ${project} down: compose project ${project}: project ${project} removed \\(3 containers, 1 network, 0 volumes\\); its compose override: removed `,
    ),
  );
  assert.deepEqual(leftovers(project), [], 'nothing of the project is left');
  assert.equal(existsSync(override), false);
  assert.equal(existsSync(journalFile), false, 'the journal is empty');
});
