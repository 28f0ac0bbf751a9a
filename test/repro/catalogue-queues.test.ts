import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { failures, runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';

// The reproduction suite, the catalogue's queues and load: lifo-vs-fifo, kill-restart, load-spike, closed-loop-pause: each experiment
// (experiments/README.md) at the suite's scale (test/helpers/catalogue.ts), asserting the
// outcome class its row claims and the evidence the row names. The catalogue is in three
// files so test/run.js can run them side by side; the retry-storm family, the cache
// experiments, the client policies and the LLM platform have their own files.

describe('reproduction suite: the catalogue, queues and load', () => {
  test('lifo-vs-fifo: both recover; FIFO only once its backlog of dead requests drains, with many more timeouts; LIFO at once, with fewer failures', async () => {
    const fifo = await runScaled('experiments/lifo-vs-fifo-fifo.yaml');
    const lifo = await runScaled('experiments/lifo-vs-fifo-lifo.yaml');
    assertClaimed('lifo-vs-fifo-fifo', fifo.s);
    assertClaimed('lifo-vs-fifo-lifo', lifo.s);
    assert.ok(
      failures(lifo.s) < failures(fifo.s),
      `failed origins: LIFO ${failures(lifo.s)}, FIFO ${failures(fifo.s)}`,
    );
    // Both time out every origin of the pause itself; FIFO also times out what it served
    // too late while draining.
    assert.ok(
      fifo.s.outcomes.timeout > 1.5 * lifo.s.outcomes.timeout,
      `timeouts: FIFO ${fifo.s.outcomes.timeout}, LIFO ${lifo.s.outcomes.timeout}`,
    );
    // The backlog's drain shows in FIFO's recovery time; LIFO serves the newest at once.
    assert.ok(
      lifo.s.recoveryTimeS! < fifo.s.recoveryTimeS!,
      `recovery: LIFO ${lifo.s.recoveryTimeS} s, FIFO ${fifo.s.recoveryTimeS} s`,
    );
    assert.ok(lifo.s.recoveryTimeS! <= 1, `LIFO recovered after ${lifo.s.recoveryTimeS} s`);
  });

  test('kill-restart: a killed api refuses connections, restarts empty and recovers from the retrying client', async () => {
    const { s } = await runScaled('experiments/kill-restart.yaml');
    assert.ok(s.outcomes['conn-refused'] > 0, 'the kill was felt as refused connections');
    assert.ok(s.policies.retries > 0, 'the retry-storm client retried');
    assertClaimed('kill-restart', s);
  });

  test('load-spike: 4x the load offered over the spike; it recovers, and the recovery time measures the backlog drain', async () => {
    const { s, rows } = await runScaled('experiments/load-spike.yaml');
    const t = s.triggers[0]!;
    const inSpike =
      sum(rows, 'offered', Math.ceil(t.startS), Math.floor(t.endS)) /
      (Math.floor(t.endS) - Math.ceil(t.startS));
    const base = s.baseline.offeredPerS!;
    assert.ok(inSpike > 3 * base, `offered ${inSpike}/s in the spike vs ${base}/s`);
    assertClaimed('load-spike', s);
    // The backlog at nominal capacity μ: (4λ − μ)·D built up, drained at μ − λ. Goodput
    // returns a little before the queue is empty (once waits fall under the 1 s timeout),
    // and the api serves less than nominal on a shared machine (a longer drain): at least
    // half the nominal drain time.
    const mu = (s.capacity.usedPerS ?? s.capacity.nominalPerS)!;
    const drainS = ((4 * base - mu) * (t.endS - t.startS)) / (mu - base);
    assert.ok(
      s.recoveryTimeS! >= 0.5 * drainS,
      `recovered after ${s.recoveryTimeS} s; the backlog drains in ${drainS.toFixed(1)} s at ${mu}/s`,
    );
  });

  test('closed-loop-pause: the closed loop, labelled CLOSED, recovers from the pause that collapses the open loop', async () => {
    const { s, out } = await runScaled('experiments/closed-loop-pause.yaml');
    assert.equal(s.load?.model, 'closed');
    assert.ok(
      s.warnings.some((w) => /\bCLOSED\b/.test(w)),
      s.warnings.join('; '),
    );
    assert.match(readFileSync(join(out, 'report.md'), 'utf8'), /\bCLOSED\b/);
    assertClaimed('closed-loop-pause', s);
  });
});
