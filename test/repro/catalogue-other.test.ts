import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { reproRuntimeArgs, runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed, describeOutcome, suiteScale } from '../helpers/catalogue.js';
import { runCli, tempDir } from '../helpers/cli.js';
import type { CalibrationResult } from '../../orchestrator/calibrate/runCalibration.js';
import { baselineGoodput, memoryLevels, numbers } from '../helpers/seriesChecks.js';

// The reproduction suite, the catalogue's oscillation, the HotOS example, the step test and the soak: each experiment
// (experiments/README.md) at the suite's scale (test/helpers/catalogue.ts), asserting the
// outcome class its row claims and the evidence the row names. The catalogue is in three
// files so test/run.js can run them side by side; the retry-storm family, the cache
// experiments, the client policies and the LLM platform have their own files.

describe('reproduction suite: the catalogue, oscillation, the HotOS example, the step test and the soak', () => {
  test('shed-breaker-oscillation: invalid, because the loop oscillates with no trigger: the breaker opens in the baseline, whose hypothesis fails, and reopens after the pause has ended', async () => {
    const { s, rows } = await runScaled(
      'experiments/shed-breaker-oscillation.yaml',
      [],
      {},
      { invalid: true },
    );
    assertClaimed('shed-breaker-oscillation', s);
    // Invalid for its baseline (other checks may fail too on a busy machine).
    assert.ok(
      s.validity.failed.some((f) => f.check === 'baseline'),
      `the steady-state hypothesis failed in the baseline: ${describeOutcome(s)}`,
    );
    const before = sum(rows, 'breaker_opens', 0, Math.floor(s.trigger.startS));
    assert.ok(before >= 1, `breaker opens before the trigger: ${before}`);
    const reopened = sum(rows, 'breaker_opens', Math.ceil(s.trigger.endS), rows.length);
    assert.ok(reopened >= 1, `breaker opens after the pause ended: ${reopened}`);
    // Goodput swings from near nothing to near full or back, second to second, from the
    // start of the baseline on. Near full: the offered rate of that second.
    const g = rows
      .filter((r) => r['phase'] !== 'warmup' && r['phase'] !== 'drain')
      .map((r) => Number(r['goodput'] ?? 0) / Math.max(1, Number(r['offered'] ?? 0)));
    const swings = g.filter((x, i) => i > 0 && x < 0.2 !== g[i - 1]! < 0.2).length;
    assert.ok(swings >= 4, `goodput / offered per second: ${g.map((x) => x.toFixed(2)).join(' ')}`);
  });

  test("hotos21-retry: the HotOS '21 retry example collapses: metastable, amplification near 2, goodput near 0", async () => {
    const { s } = await runScaled('experiments/hotos21-retry.yaml');
    assertClaimed('hotos21-retry', s);
    const a = s.afterTrigger.amplification!;
    assert.ok(a >= 1.8 && a <= 2.05, `client amplification ${a} (2 attempts at most)`);
    assert.ok(
      s.afterTrigger.goodputPerS! < 0.1 * baselineGoodput(s),
      `goodput ${s.afterTrigger.goodputPerS}/s`,
    );
  });

  test('step-test: metabench calibrate saturates within 10% of the nominal 400/s, gives the margin against the 280/s peak, and goodput falls past saturation', async () => {
    const dir = tempDir('step-test');
    const out = join(dir, 'out');
    const r = await runCli(
      [
        'calibrate',
        'experiments/step-test.yaml',
        '--scale',
        String(suiteScale('step-test')),
        '--out',
        out,
        '--quiet',
        ...reproRuntimeArgs(),
      ],
      { METABENCH_STATE_DIR: join(dir, 'state') },
    );
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(readFileSync(join(out, 'calibration.json'), 'utf8')) as CalibrationResult;
    assert.equal(c.status, 'saturated', c.reason);
    const sat = c.saturation!.offeredPerS;
    const nominal = 8 / 0.02;
    assert.ok(Math.abs(sat - nominal) <= 0.1 * nominal, `saturation at ${sat}/s, nominal ${nominal}/s`);
    assert.equal(c.margin.productionPeakPerS, 280);
    assert.ok(
      c.margin.ratio !== null && Math.abs(c.margin.ratio - sat / 280) < 0.01,
      `margin ${c.margin.ratio}`,
    );
    assert.ok(c.overload && c.overload.goodputPerS !== null, 'the 150% step ran');
    assert.ok(
      c.overload.goodputPerS < c.saturation!.goodputPerS!,
      `goodput ${c.overload.goodputPerS}/s at 150% vs ${c.saturation!.goodputPerS}/s at saturation`,
    );
  });

  test("soak: recovers from its small pause; no lab process's private memory keeps growing (the last third's median anonymous memory at most 1.2x the middle third's)", async () => {
    const { s, rows } = await runScaled('experiments/soak.yaml');
    assertClaimed('soak', s);
    // From the end of the warm-up (caches and pools warm) to the end of the observation.
    const measured = rows.filter((r) => r['phase'] !== 'warmup' && r['phase'] !== 'drain');
    for (const c of ['api', 'redis', 'postgres', 'faultproxy']) {
      assert.ok(
        numbers(measured, `proc_${c}_rss_bytes`).length > measured.length / 2,
        `${c}'s RSS is recorded`,
      );
      // Leaks grow anonymous memory; the RSS also grows as Postgres's backends first touch
      // its shared buffers (152 → 183 MB in CI at scale 0.2: 31 MB of its 32 MB), no leak.
      const col = `proc_${c}_anon_bytes`;
      assert.ok(numbers(measured, col).length > measured.length / 2, `${col} is recorded`);
      assert.ok(
        rows.some((r) => typeof r[`proc_${c}_cpu`] === 'number'),
        `proc_${c}_cpu is recorded`,
      );
      const { middle, last } = memoryLevels(numbers(measured, col));
      assert.ok(
        last <= 1.2 * middle,
        `${c} median anonymous memory ${middle} B in the middle third, ${last} B in the last`,
      );
    }
  });
});
