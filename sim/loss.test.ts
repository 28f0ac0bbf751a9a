import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import type { RunSummary } from '../orchestrator/analysis/summary.js';
import { runExperiment } from '../orchestrator/run/runExperiment.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import { experimentPath, suiteScale } from '../test/helpers/catalogue.js';
import { readSeries, sum } from '../test/helpers/experiment.js';
import { assertLossAmplification, lossProbability, type Window } from '../test/helpers/loss.js';

registerRuntimes();

// The simulated twin of the catalogue's loss on the clients' link (issue 35, point 5a):
// retry-storm-loss.yaml at the suite's scale, the client's retries within the bounds the
// loss probability gives (sim/catalogueScale.test.ts checks its claimed outcome at three
// scales and seeds; test/repro/loss.test.ts the same bounds on the local lab).
test('retry-storm-loss in simulation: 1 + p + p² + p³ attempts per origin while replies are lost, one after', async (tc) => {
  const name = 'retry-storm-loss';
  const p = lossProbability(name);
  const out = join(mkdtempSync(join(tmpdir(), 'metabench-loss-')), 'out');
  await runExperiment(loadExperimentFile(experimentPath(name)), {
    scale: suiteScale(name),
    out,
    quiet: true,
    stop: new AbortController().signal,
    runtime: 'sim',
  });
  const s = JSON.parse(readFileSync(join(out, 'run-1', 'summary.json'), 'utf8')) as RunSummary;
  assert.equal(s.outcome, 'recovered');
  const rows = readSeries(out);
  const t = s.trigger!;
  const loss: Window = [Math.ceil(t.startS) + 1, Math.floor(t.endS)];
  const perOrigin = assertLossAmplification(
    rows,
    loss,
    p,
    4,
    { origins: 'offered', attempts: 'attempts' },
    s.outcomeReason ?? '',
  );
  const after: Window = [Math.ceil(t.endS) + 1, Math.floor(t.endS) + 1 + (loss[1] - loss[0])];
  const ratio = (w: Window, a: string, b: string): number => sum(rows, a, ...w) / sum(rows, b, ...w);
  tc.diagnostic(
    `p ${p}: ${perOrigin.toFixed(3)} attempts per origin during the loss, ` +
      `${ratio(after, 'attempts', 'offered').toFixed(3)} after; api received ` +
      `${ratio(loss, 'server_received', 'attempts').toFixed(3)}, completed ` +
      `${ratio(loss, 'server_completed', 'attempts').toFixed(3)} per attempt`,
  );
  assert.ok(ratio(after, 'attempts', 'offered') < 1.01);
  // Downstream loss: the api did the work of every attempt whose reply was lost.
  assert.ok(ratio(loss, 'server_received', 'attempts') > 0.95);
  assert.ok(ratio(loss, 'server_completed', 'attempts') > 0.95);
});
