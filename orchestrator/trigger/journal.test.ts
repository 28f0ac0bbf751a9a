import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UndoRecipe } from '../lab/Lab.js';
import { Journal, recoverOrphanedFaults, runUndo } from './journal.js';

/** A pid that was alive a moment ago and is not now: a dead orchestrator. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '0']).pid!;
}

function orphanJournal(entries: { id: string; undo: UndoRecipe }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-journal-test-'));
  writeFileSync(
    join(dir, '1.json'),
    JSON.stringify({
      owner: { pid: deadPid(), startTicks: null },
      entries: entries.map((e) => ({ ...e, appliedAt: new Date().toISOString() })),
    }),
  );
  return dir;
}

test('an orphaned journal is undone last entry first, then removed', () => {
  const made = [1, 2].map(() => mkdtempSync(join(tmpdir(), 'metabench-undo-')));
  const dir = orphanJournal([
    { id: 'lab', undo: { kind: 'remove', path: made[0]!, what: 'first recorded' } },
    { id: 'fault', undo: { kind: 'remove', path: made[1]!, what: 'last recorded' } },
  ]);
  const said = recoverOrphanedFaults(dir);
  assert.equal(said.length, 2);
  assert.match(said[0]!, /^last recorded: removed /);
  assert.match(said[1]!, /^first recorded: removed /);
  assert.ok(made.every((d) => !existsSync(d)));
  assert.deepEqual(readdirSync(dir), []);
  assert.deepEqual(recoverOrphanedFaults(dir), [], 'nothing is left to undo');
});

test('a live orchestrator’s journal is left alone', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-journal-live-'));
  const j = new Journal(dir);
  const path = mkdtempSync(join(tmpdir(), 'metabench-undo-'));
  j.record({ id: 'x', appliedAt: new Date().toISOString(), undo: { kind: 'remove', path, what: 'mine' } });
  assert.deepEqual(recoverOrphanedFaults(dir), []);
  assert.ok(existsSync(path));
  j.clear('x');
  assert.deepEqual(readdirSync(dir), [], 'clearing the last entry removes the file');
});

test('steps run in order; remove touches only metabench temporary directories', () => {
  const mine = mkdtempSync(join(tmpdir(), 'metabench-undo-'));
  const other = join(mkdtempSync(join(tmpdir(), 'someone-else-')), 'data');
  mkdirSync(other);
  const said = runUndo({
    kind: 'steps',
    what: 'stop the lab',
    steps: [
      { kind: 'none', what: 'nothing' },
      { kind: 'remove', path: other, what: 'theirs' },
      { kind: 'remove', path: mine, what: 'ours' },
      { kind: 'remove', path: mine, what: 'ours again' },
    ],
  });
  assert.match(
    said,
    /^stop the lab: nothing: nothing to undo; theirs: .* is not a metabench temporary directory, left alone; ours: removed .*; ours again: .* is already gone$/,
  );
  assert.ok(existsSync(other));
  assert.ok(!existsSync(mine));
});

test('a signal is never sent to a pid that now belongs to another process', () => {
  const said = runUndo({
    kind: 'signal',
    pid: process.pid,
    startTicks: -1,
    signal: 'SIGCONT',
    what: 'resume api',
  });
  assert.match(said, /now belongs to another process, left alone/);
});

test('a worker thread keeps a journal of its own beside the main thread’s: neither overwrites the other', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-journal-threads-'));
  const undo = (what: string): UndoRecipe => ({ kind: 'remove', path: join(dir, 'nothing'), what });
  const main = new Journal(dir);
  main.record({ id: 'a', appliedAt: new Date().toISOString(), undo: undo('main thread') });
  const journalUrl = new URL('./journal.js', import.meta.url).href;
  const worker = new Worker(
    `import(${JSON.stringify(journalUrl)}).then(({ Journal }) => {
       const j = new Journal(${JSON.stringify(dir)});
       j.record({ id: 'a', appliedAt: new Date().toISOString(), undo: { kind: 'remove', path: ${JSON.stringify(join(dir, 'nothing'))}, what: 'worker thread' } });
     });`,
    { eval: true },
  );
  const tid = worker.threadId; // -1 once it has exited
  await once(worker, 'exit');
  const files = readdirSync(dir).sort();
  assert.deepEqual(files, [`${process.pid}-thread${tid}.json`, `${process.pid}.json`]);
  const whats = files.map(
    (f) =>
      (JSON.parse(readFileSync(join(dir, f), 'utf8')) as { entries: { undo: { what: string } }[] })
        .entries[0]!.undo.what,
  );
  assert.deepEqual(whats, ['worker thread', 'main thread']);
  main.clear('a');
  assert.deepEqual(readdirSync(dir), [`${process.pid}-thread${tid}.json`], 'the worker’s entry is kept');
});

test('a command trigger’s undo is journaled as a shell recipe: after a SIGKILL the next command runs it, in the directory the run used', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-journal-shell-'));
  const work = mkdtempSync(join(tmpdir(), 'metabench-shell-cwd-'));
  const journalUrl = new URL('./journal.js', import.meta.url).href;
  const kindUrl = new URL('./kinds/command.js', import.meta.url).href;
  // An orchestrator that journals and applies a command trigger, then is killed mid-run.
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { Journal } = await import(${JSON.stringify(journalUrl)});
       const { command } = await import(${JSON.stringify(kindUrl)});
       const t = command.create({ kind: 'command', apply: 'echo on > fault', undo: 'rm fault && echo undone > log', duration: 1000 }, 'x');
       const j = new Journal(${JSON.stringify(dir)});
       j.record({ id: 'f', appliedAt: new Date().toISOString(), undo: t.undoRecipe(undefined) });
       await t.apply(undefined);
       process.stdout.write('applied\\n');
       setInterval(() => undefined, 1000);`,
    ],
    { cwd: work, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [first] = (await once(child.stdout!, 'data')) as [Buffer];
  assert.equal(first.toString().trim(), 'applied');
  assert.ok(existsSync(join(work, 'fault')), 'the apply command ran in the run’s directory');
  child.kill('SIGKILL');
  await once(child, 'exit');
  const said = recoverOrphanedFaults(dir);
  assert.equal(said.length, 1);
  assert.match(said[0]!, /^command `echo on > fault`: ran `rm fault && echo undone > log` in /);
  assert.ok(!existsSync(join(work, 'fault')), 'the fault is undone');
  assert.equal(readFileSync(join(work, 'log'), 'utf8'), 'undone\n');
  assert.deepEqual(readdirSync(dir), []);
});

test('a shell undo that fails says how, with its output', () => {
  const dir = orphanJournal([
    {
      id: 'f',
      undo: { kind: 'shell', command: 'echo nope >&2; exit 3', cwd: tmpdir(), what: 'command `x`' },
    },
  ]);
  const said = recoverOrphanedFaults(dir);
  assert.match(
    said[0]!,
    /^command `x`: could not undo \(`echo nope >&2; exit 3` exited with status 3: nope\)$/,
  );
});
