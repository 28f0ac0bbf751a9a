import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { mmcSojournQuantile, mmcSojournTail } from '../orchestrator/model/queueing.js';
import { planOfFile } from '../test/helpers/plan.js';

// docs/reproductions.md states the HotOS '21 configuration's baseline p99 from M/M/c
// theory; the figure must be the one computed from the experiment file as it is.

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test("docs/reproductions.md's baseline p99 for hotos21-retry is M/M/c theory's, computed from the experiment file", () => {
  const plan = planOfFile('hotos21-retry');
  const api = plan.experiment.lab!.api;
  assert.equal(api.work.dist, 'exponential', 'the closed form is for exponential work');
  assert.equal(api.queue, 'fifo');
  const c = api.workers;
  const mu = 1000 / api.work.mean; // per second
  const lambda = plan.ratePerS;
  const p99Ms = Math.round(mmcSojournQuantile(c, lambda, mu, 0.99) * 1000);
  const doc = readFileSync(join(ROOT, 'docs/reproductions.md'), 'utf8');
  const m =
    /M\/M\/(\d+) queue at ρ = [^\n]*\n[^]*?baseline p99 response time at \*\*(\d+) ms\*\* at (\d+)\/s/.exec(
      doc,
    );
  assert.ok(m, 'the doc states the baseline p99');
  assert.equal(Number(m[1]), c);
  assert.equal(Number(m[3]), lambda);
  assert.equal(Number(m[2]), p99Ms, `M/M/${c} at ${lambda}/s, ${api.work.mean} ms: p99 ${p99Ms} ms`);
  // And the claim that the healthy state almost never reaches the attempt timeout.
  assert.ok(mmcSojournTail(c, lambda, mu, plan.experiment.client.timeout / 1000) < 1e-6);
});
