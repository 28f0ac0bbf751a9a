import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readEvents } from '../../bench/record/eventLog.js';
import { loadExperimentFile } from '../spec/load.js';
import { runExperiment, type RunOptions } from '../run/runExperiment.js';
import { runExperimentOnThread, THREAD_FROM_ORIGINS, worthAThread } from '../run/onThread.js';
import { registerRuntimes } from './runtimes.js';

// `metabench run --runtime sim` runs on a worker thread (orchestrator/run/onThread.ts): the
// folder it writes is the one runExperiment writes on this thread, and a stop reaches it.
registerRuntimes();
const FILE = fileURLToPath(new URL('../../../experiments/retry-storm.yaml', import.meta.url));
const WORKER = new URL('./simWorker.js', import.meta.url);

test('a simulated run on its thread writes what it writes on this one, and stops when told', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'metabench-simthread-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const e = loadExperimentFile(FILE, []);
  const opts = (out: string, stop: AbortSignal): RunOptions => ({
    scale: 0.2,
    out: join(root, out),
    quiet: true,
    stop,
    runtime: 'sim',
  });
  const here = await runExperiment(e, opts('here', new AbortController().signal));
  const there = await runExperimentOnThread(e, opts('there', new AbortController().signal), WORKER);
  assert.equal(there.dir, join(root, 'there'));
  assert.deepEqual(there.runs, here.runs);
  assert.equal(here.runs[0]!.outcome, 'metastable');
  for (const f of ['run-1/summary.json', 'run-1/timeseries.csv', 'summary.json'])
    assert.equal(readFileSync(join(there.dir, f), 'utf8'), readFileSync(join(here.dir, f), 'utf8'), f);
  const events = (dir: string): Record<string, unknown>[] => readEvents(join(dir, 'run-1'));
  assert.deepEqual(events(there.dir), events(here.dir));
  // The report: written there on this thread once the run's thread is done, here on the run's.
  const report = (dir: string): string[] =>
    ['report.md', 'report.html', 'figures', 'data'].flatMap((f) =>
      f.includes('.') ? [f] : readdirSync(join(dir, f)).map((n) => join(f, n)),
    );
  assert.deepEqual(report(there.dir), report(here.dir));
  assert.ok(report(here.dir).some((f) => f.endsWith('.pdf')));
  // The same but for the run's start time (the manifest's date, in report.md and report.html).
  const read = (dir: string, f: string): string =>
    readFileSync(join(dir, f), 'latin1').replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'DATE');
  for (const f of report(here.dir)) assert.equal(read(there.dir, f), read(here.dir, f), f);

  // A stop on this thread ends the run on the other: an interrupted run, its folder written.
  const stop = new AbortController();
  setTimeout(() => stop.abort(), 150);
  const stopped = await runExperimentOnThread(e, { ...opts('stopped', stop.signal), scale: 5 }, WORKER);
  assert.equal(stopped.runs.length, 1);
  assert.equal(stopped.runs[0]!.usable, false);
  const written = JSON.parse(readFileSync(join(stopped.dir, 'run-1/summary.json'), 'utf8')) as {
    warnings: string[];
  };
  assert.ok(
    written.warnings.some((w) => /the run was interrupted at/.test(w)),
    written.warnings.join('\n'),
  );
});

test('a run goes on a thread from 200,000 planned origins, all repetitions counted', () => {
  const e = loadExperimentFile(FILE, []);
  assert.equal(THREAD_FROM_ORIGINS, 200_000);
  // retry-storm: 280 origins/s for 280 s, about 78,000 origins a run.
  assert.equal(worthAThread(e, { scale: 1 }), false);
  assert.equal(worthAThread({ ...e, repeat: 3 }, { scale: 1 }), true);
  assert.equal(worthAThread(e, { scale: 3 }), true);
  assert.equal(worthAThread({ ...e, repeat: 2 }, { scale: 0.2 }), false);
});
