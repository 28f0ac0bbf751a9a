import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { processState } from '../helpers/procState.js';
import { runCli, startCli, tempDir, waitFor } from '../helpers/cli.js';

/** A short experiment: 1 s warm-up, 2 s baseline, then a 6 s pause of the api. */
function shortPauseExperiment(dir: string): string {
  const file = join(dir, 'short-pause.yaml');
  writeFileSync(
    file,
    [
      'name: short-pause',
      'lab: { api: { workers: 4, work: { dist: constant, mean: 5ms } } }',
      'load: { arrival: constant, rate: 50/s }',
      'client: { timeout: 300ms, retry: { policy: none } }',
      'schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 6s }, observe: 2s }',
      'recovery: { within: 2x, tolerance: 10%, window: 1s, hold: 1s }',
      '',
    ].join('\n'),
  );
  return file;
}

/** Starts the short-pause run and returns once its api is paused, with the api's pid. */
async function pausedRun(dir: string, out: string, state: string) {
  const cli = startCli(['run', '--any-scale', shortPauseExperiment(dir), '--out', out], {
    METABENCH_STATE_DIR: state,
  });
  await waitFor('the pause to be applied', () => /pause api applied/.test(cli.stderrSoFar()));
  const manifest = JSON.parse(readFileSync(join(out, 'run-1', 'manifest.json'), 'utf8')) as {
    topology: { components: { pid: number }[] };
  };
  return { cli, apiPid: manifest.topology.components[0]!.pid };
}

test('an invalid experiment exits 3 with file, line and field, and no stack trace', async () => {
  const dir = tempDir('bad');
  const file = join(dir, 'bad.yaml');
  writeFileSync(file, 'name: bad\nlab:\n  api: { workers: -1 }\n');
  for (const cmd of ['run', 'validate']) {
    const r = await runCli([cmd, file]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(
      r.stderr,
      new RegExp(
        `${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:\\d+: lab\\.api\\.workers: must be at least 1`,
      ),
    );
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
  const missing = await runCli(['validate', join(dir, 'nope.yaml')]);
  assert.equal(missing.code, 3);
  assert.match(missing.stderr, /no such file/);
});

test('bad command-line usage exits 2', async () => {
  assert.equal((await runCli(['run'])).code, 2);
  assert.equal(
    (await runCli(['run', '--any-scale', 'experiments/retry-storm.yaml', '--scale', '-1'])).code,
    2,
  );
  assert.equal((await runCli(['frobnicate'])).code, 2);
  assert.equal((await runCli(['--help'])).code, 0);
});

for (const signal of ['SIGTERM', 'SIGHUP'] as const)
  test(`${signal} during a pause resumes the api, stops the lab, keeps what was measured, and exits 11`, async () => {
    const dir = tempDir(signal.toLowerCase());
    const out = join(dir, 'out');
    const state = join(dir, 'state');
    const { cli, apiPid } = await pausedRun(dir, out, state);
    assert.equal(processState(apiPid), 'T', 'the api is stopped by the pause');
    cli.child.kill(signal);
    const r = await cli.done;
    assert.equal(r.code, 11, r.stderr);
    assert.match(r.stderr, /pause api undone/);
    // The api was resumed, then shut down with the lab: it is not left stopped.
    await waitFor('the api to exit', () => processState(apiPid) === null, 10_000);
    const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
      usable: boolean;
      offered: number;
      recorded: number;
      warnings: string[];
    };
    assert.equal(s.usable, false);
    assert.equal(s.offered, s.recorded);
    assert.ok(s.offered > 100, `measured ${s.offered} origins before the interruption`);
    assert.ok(s.warnings.some((w) => /interrupted/.test(w)));
    assert.ok(existsSync(join(out, 'report.md')));
    assert.ok(!existsSync(join(state, 'journal', `${cli.child.pid}.json`)), 'journal cleared');
  });

test('a reader that leaves mid-pause (stderr closed, as `| head` does) does not end the run: it finishes, resumes the api and writes its results', async () => {
  const dir = tempDir('epipe');
  const out = join(dir, 'out');
  const { cli, apiPid } = await pausedRun(dir, out, join(dir, 'state'));
  // Our end of its stderr closed: every later status line the run writes meets EPIPE.
  cli.child.stderr!.destroy();
  const r = await cli.done;
  assert.equal(r.signal, null);
  assert.notEqual(r.code, 1, 'not a crash');
  await waitFor('the api to exit', () => processState(apiPid) === null, 10_000);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
    trigger: { applied: boolean };
    afterTrigger: { seconds: number };
  };
  assert.equal(s.trigger.applied, true);
  assert.ok(s.afterTrigger.seconds >= 1, `observed ${s.afterTrigger.seconds} s after the trigger`);
  assert.ok(existsSync(join(out, 'report.md')));
  // Record, then analyse: a real lab run (scrapes, the machine's state, the lateness replay)
  // analysed again from run-1/record.json.gz gives its summary.json byte for byte.
  const written = ['summary.json', 'run-1/summary.json'].map((f) => readFileSync(join(out, f), 'utf8'));
  const again = await runCli(['report', out, '--pdf', 'none']);
  assert.equal(again.code, 0, again.stderr);
  assert.doesNotMatch(again.stderr, /differs from the one written at run time/);
  assert.deepEqual(
    ['summary.json', 'run-1/summary.json'].map((f) => readFileSync(join(out, f), 'utf8')),
    written,
  );
});

test('Ctrl-C (SIGINT) before the trigger: the bin itself exits 11, and the report claims no trigger or recovery', async () => {
  const dir = tempDir('sigint');
  const out = join(dir, 'out');
  const file = join(dir, 'long-baseline.yaml');
  // The trigger is planned 31 s in: the interruption comes long before it.
  writeFileSync(
    file,
    [
      'name: long-baseline',
      'lab: { api: { workers: 4, work: { dist: constant, mean: 5ms } } }',
      'load: { arrival: constant, rate: 50/s }',
      'client: { timeout: 300ms, retry: { policy: none } }',
      'schedule: { warmup: 1s, baseline: 30s, trigger: { kind: pause, target: api, duration: 2s }, observe: 5s }',
      'recovery: { within: 2x, tolerance: 10%, window: 1s, hold: 1s }',
      '',
    ].join('\n'),
  );
  const cli = startCli(['run', '--any-scale', file, '--out', out], {
    METABENCH_STATE_DIR: join(dir, 'state'),
  });
  await waitFor('the run to start', () => existsSync(join(out, 'run-1', 'manifest.json')));
  cli.child.kill('SIGINT');
  const r = await cli.done;
  // node dist/orchestrator/cli/main.js (the installed bin) exits with its own code, 11.
  assert.equal(r.code, 11, r.stderr);
  assert.equal(r.signal, null);
  assert.doesNotMatch(r.stderr, /pause api applied/);
  const s = JSON.parse(readFileSync(join(out, 'summary.json'), 'utf8')) as {
    usable: boolean;
    outcome: string;
    metastable: boolean | null;
    trigger: { applied: boolean };
    afterTrigger: { seconds: number };
  };
  assert.equal(s.usable, false);
  assert.equal(s.trigger.applied, false);
  assert.equal(s.outcome, 'invalid');
  assert.equal(s.metastable, null);
  assert.equal(s.afterTrigger.seconds, 0);
  const md = readFileSync(join(out, 'report.md'), 'utf8');
  assert.match(md, /The run ended before the trigger/);
  assert.doesNotMatch(md, /recovery time|recovered after|not recovered|\*\*metastable\*\*/);
});

test('after SIGKILL of the orchestrator mid-pause, `metabench lab reset` finds the journal and resumes the api', async () => {
  const dir = tempDir('sigkill');
  const out = join(dir, 'out');
  const state = join(dir, 'state');
  const { cli, apiPid } = await pausedRun(dir, out, state);
  cli.child.kill('SIGKILL');
  await cli.done;
  assert.equal(processState(apiPid), 'T', 'the orphaned api is still stopped');
  assert.ok(existsSync(join(state, 'journal', `${cli.child.pid}.json`)), 'the journal survived the crash');
  const reset = await runCli(['lab', 'reset'], { METABENCH_STATE_DIR: state });
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(reset.stderr + reset.stdout, new RegExp(`resume api \\(pid ${apiPid}\\): sent SIGCONT`));
  // Resumed, it sees its parent gone (stdin closed) and exits: nothing is left behind.
  await waitFor(
    'the orphaned api to resume and exit',
    () => processState(apiPid) !== 'T' || processState(apiPid) === null,
    10_000,
  );
  await waitFor('the orphaned api to exit', () => processState(apiPid) === null, 10_000);
  assert.ok(!existsSync(join(state, 'journal', `${cli.child.pid}.json`)), 'journal cleared');
});
