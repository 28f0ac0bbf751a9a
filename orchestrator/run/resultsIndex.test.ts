import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadExperimentFile } from '../spec/load.js';
import { parseSet, type Override } from '../../foundation/overrides.js';
import { runExperiment } from './runExperiment.js';
import { readIndex } from '../results/runIndex.js';
import { overridesHash } from '../results/naming.js';
import { registerRuntimes } from '../cli/runtimes.js';

// Results folders say what ran (runtime, scale, overrides) and results/index lists every
// run, interrupted ones marked; `metabench ls` prints it.
registerRuntimes();
const FILE = fileURLToPath(new URL('../../../experiments/retry-storm.yaml', import.meta.url));
const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));

test('runs are named by runtime, scale and overrides, and indexed however they end', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'metabench-names-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const ls = (dir: string) => spawnSync(process.execPath, [CLI, 'ls', dir], { encoding: 'utf8' });
  const none = ls(root);
  assert.equal(none.status, 0);
  assert.equal(none.stdout, '');
  assert.match(none.stderr, /no index yet/);

  const set = (parseSet('client.retry.maxAttempts=4') as { ok: true; value: Override }).value;
  const opts = { scale: 0.2, quiet: true, runtime: 'sim' as const, resultsRoot: root, sourceFile: FILE };
  const plain = await runExperiment(loadExperimentFile(FILE, []), {
    ...opts,
    stop: new AbortController().signal,
  });
  const overridden = await runExperiment(loadExperimentFile(FILE, [set]), {
    ...opts,
    overrides: ['client.retry.maxAttempts=4'],
    stop: new AbortController().signal,
  });
  const stop = new AbortController();
  stop.abort();
  const interrupted = await runExperiment(loadExperimentFile(FILE, []), { ...opts, stop: stop.signal });

  assert.match(basename(plain.dir), /^\d{4}-\d\d-\d\d-retry-storm-sim-s0\.2$/);
  assert.equal(
    basename(overridden.dir),
    `${basename(plain.dir)}-set${overridesHash(['client.retry.maxAttempts=4'])}`,
  );
  assert.equal(basename(interrupted.dir), `${basename(plain.dir)}-2`);

  const index = readIndex(root)!;
  assert.deepEqual(
    index.map((e) => [e.kind, e.file, e.runtime, e.scale, e.folder]),
    [plain, overridden, interrupted].map((r) => ['run', FILE, 'sim', 0.2, basename(r.dir)]),
  );
  assert.equal(index[0]!.outcome, plain.runs[0]!.outcome);
  assert.equal(index[0]!.validity, plain.runs[0]!.validity.valid ? 'valid' : 'invalid');
  assert.match(index[2]!.outcome, /^interrupted/);

  const listed = ls(root);
  assert.equal(listed.status, 0, listed.stderr);
  const lines = listed.stdout.trim().split('\n');
  assert.equal(lines.length, 4);
  assert.match(lines[0]!, /^date\s+kind\s+file/);
  assert.ok(lines[3]!.includes('interrupted') && lines[3]!.endsWith(basename(interrupted.dir)), lines[3]);
});
