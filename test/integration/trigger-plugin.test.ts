import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';
import { registerRuntimes } from '../../orchestrator/cli/runtimes.js';
import { runExperiment } from '../../orchestrator/run/runExperiment.js';
import { parseExperiment } from '../../orchestrator/spec/load.js';
import { registerTrigger } from '../../orchestrator/trigger/registry.js';
import { markFile } from '../fixtures/triggers/markFile.js';
import { tempDir } from '../helpers/cli.js';
import { readEvents } from '../../bench/record/eventLog.js';

// Issue 34, point 2: a trigger kind added as one file (test/fixtures/triggers/markFile.ts)
// and one registry line works on the real local runtime: the experiment file names it,
// the run journals its undo before applying it, applies it at its time through the Lab,
// undoes it at its end, and the run's events and summary carry it like any other kind.

registerTrigger(markFile);
registerRuntimes();

test('a trigger kind registered from a test fixture runs on the local lab: applied, journaled, undone', async () => {
  const dir = tempDir('trigger-plugin');
  const mark = join(dir, 'mark');
  const state = join(dir, 'state');
  const journalDir = join(state, 'journal');
  const out = join(dir, 'out');
  const e = parseExperiment(
    `
name: trigger-plugin
lab: { api: { workers: 4, work: { dist: constant, mean: 5ms } } }
load: { arrival: constant, rate: 20/s }
client: { timeout: 1s, retry: { policy: none } }
schedule: { warmup: 1s, baseline: 3s, trigger: { kind: mark-file, path: ${mark}, duration: 2s }, observe: 3s }
recovery: { within: 5x, tolerance: 20%, window: 1s, hold: 1s }
seed: 3
`,
    join(dir, 'trigger-plugin.yaml'),
  );
  // While the mark exists: what it says, and what the journal holds (the same event loop as the run).
  const seen: { content: string; journal: unknown[] }[] = [];
  const timer = setInterval(() => {
    if (!existsSync(mark)) return;
    const files = existsSync(journalDir) ? readdirSync(journalDir) : [];
    seen.push({
      content: readFileSync(mark, 'utf8'),
      journal: files.flatMap(
        (f) => (JSON.parse(readFileSync(join(journalDir, f), 'utf8')) as { entries: unknown[] }).entries,
      ),
    });
  }, 50);
  const before = process.env.METABENCH_STATE_DIR;
  process.env.METABENCH_STATE_DIR = state;
  try {
    await runExperiment(e, { scale: 1, out, quiet: true, stop: new AbortController().signal });
  } finally {
    clearInterval(timer);
    if (before === undefined) delete process.env.METABENCH_STATE_DIR;
    else process.env.METABENCH_STATE_DIR = before;
  }

  // Applied through the Lab (the api's address came from it), and journaled while applied.
  assert.ok(seen.length > 0, 'the mark was never seen while the run went on');
  assert.match(seen[0]!.content, /^http:\/\/127\.0\.0\.1:\d+\n$/);
  // The lab's own teardown is journaled beside it (run-1-lab); the trigger's entry is its undo.
  for (const s of seen) {
    const entries = s.journal.filter((j) => (j as { id: string }).id !== 'run-1-lab');
    assert.deepEqual(entries, [
      {
        id: `run-1-0-mark-file-file:${mark}`,
        appliedAt: (entries[0] as { appliedAt: string }).appliedAt,
        undo: { kind: 'remove', path: mark, what: `remove the mark ${mark}` },
      },
    ]);
  }
  // Undone: the mark is gone and the journal empty.
  assert.ok(!existsSync(mark), 'the mark is still there after the run');
  assert.deepEqual(existsSync(journalDir) ? readdirSync(journalDir) : [], []);

  // The run's record carries it like any kind: its events, and its window in summary.json.
  const events = (
    readEvents(join(out, 'run-1')) as unknown as ({
      action: string;
      kind: string;
      target: string;
      atMs: number;
    } & { e: string })[]
  ).filter((e) => e.e === 'trigger');
  assert.deepEqual(
    events.map((x) => [x.action, x.kind, x.target]),
    [
      ['apply', 'mark-file', `file:${mark}`],
      ['undo', 'mark-file', `file:${mark}`],
    ],
  );
  const s = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.triggers.length, 1);
  const t = s.triggers[0]!;
  assert.equal(t.kind, 'mark-file');
  assert.equal(t.error, undefined);
  assert.equal(t.undoError, undefined);
  // It starts at the baseline's end (4 s) and lasts its 2 s, within the loop's timer slack.
  assert.ok(Math.abs(t.startS - 4) < 0.5 && Math.abs(t.endS - t.startS - 2) < 0.5, JSON.stringify(t));
});
