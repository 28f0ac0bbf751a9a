import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerRuntimes } from '../../cli/runtimes.js';
import { Journal, recoverOrphanedFaults, runUndo } from '../../trigger/journal.js';
import { ComposeSystemLab } from './ComposeSystemLab.js';
import { composeDownRecipe } from './composeSystem.js';

// The journal's undo of a compose project brought up for a run (system.compose), without
// Docker: its entry's shape, recorded and read back as the journal writes it, and its undo
// run by recovery against an engine that is not there (said, not thrown; the override's
// directory still removed). The Docker test (test/integration/system-compose.test.ts) SIGKILLs
// a run and checks `lab reset` removes the real project.

/** An engine address where nothing answers: a socket path in a directory that does not exist. */
const NO_ENGINE = { socketPath: join(tmpdir(), 'metabench-no-engine', 'docker.sock') };

test('the compose-down recipe: the project by its label on its engine, then the override directory', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-system-'));
  assert.deepEqual(composeDownRecipe('metabench-sys', NO_ENGINE, dir), {
    kind: 'steps',
    what: 'take compose project metabench-sys down',
    steps: [
      {
        kind: 'compose-down',
        project: 'metabench-sys',
        engine: NO_ENGINE,
        what: 'compose project metabench-sys',
      },
      { kind: 'remove', path: dir, what: 'its compose override' },
    ],
  });
  // Before up, nothing of the project runs: nothing to take down.
  const lab = new ComposeSystemLab({
    file: 'compose.yml',
    project: 'metabench-sys',
    entry: { service: 'front', port: 8080 },
    links: [],
  });
  assert.equal(lab.teardownRecipe().kind, 'none');
});

test('journaled, a killed orchestrator’s compose-down is run by recovery, the override removed, the journal emptied', () => {
  registerRuntimes();
  const journalDir = mkdtempSync(join(tmpdir(), 'metabench-journal-compose-'));
  const override = mkdtempSync(join(tmpdir(), 'metabench-system-'));
  writeFileSync(join(override, 'system-override.json'), '{}\n');
  // An orchestrator that records the entry and is killed before it clears it.
  const script = `
    import(${JSON.stringify(new URL('../../trigger/journal.js', import.meta.url).href)}).then(({ Journal }) => {
      const j = new Journal(${JSON.stringify(journalDir)});
      j.record({ id: 'run-1-lab', appliedAt: new Date().toISOString(), undo: ${JSON.stringify(
        composeDownRecipe('metabench-sys', NO_ENGINE, override),
      )} });
      process.kill(process.pid, 'SIGKILL');
    });`;
  const killed = spawnSync(process.execPath, ['-e', script]);
  assert.equal(killed.signal, 'SIGKILL');
  const [name] = readdirSync(journalDir);
  const entry = (
    JSON.parse(readFileSync(join(journalDir, name!), 'utf8')) as {
      entries: { id: string; undo: { kind: string; steps: { kind: string; project?: string }[] } }[];
    }
  ).entries[0]!;
  assert.equal(entry.id, 'run-1-lab');
  assert.deepEqual(
    entry.undo.steps.map((s) => [s.kind, s.project]),
    [
      ['compose-down', 'metabench-sys'],
      ['remove', undefined],
    ],
  );

  const said = recoverOrphanedFaults(journalDir);
  assert.equal(said.length, 1);
  assert.match(
    said[0]!,
    /^take compose project metabench-sys down: compose project metabench-sys: the Docker engine is gone \(the project with it\), nothing to undo; its compose override: removed /,
  );
  assert.equal(existsSync(override), false);
  assert.deepEqual(readdirSync(journalDir), []);
});

test('a live run’s entry is its own until down clears it', () => {
  const journalDir = mkdtempSync(join(tmpdir(), 'metabench-journal-compose-'));
  const override = mkdtempSync(join(tmpdir(), 'metabench-system-'));
  const j = new Journal(journalDir);
  j.record({
    id: 'lab',
    appliedAt: new Date().toISOString(),
    undo: composeDownRecipe('p', NO_ENGINE, override),
  });
  assert.deepEqual(recoverOrphanedFaults(journalDir), [], 'the owner is alive: left alone');
  assert.ok(existsSync(override));
  j.clear('lab');
  assert.deepEqual(readdirSync(journalDir), []);
});

test('run directly, the recipe says the engine is gone rather than throwing', () => {
  registerRuntimes();
  assert.match(
    runUndo({ kind: 'compose-down', project: 'p', engine: NO_ENGINE, what: 'compose project p' }),
    /^compose project p: the Docker engine is gone/,
  );
});
