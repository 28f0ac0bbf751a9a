import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { between, failures, runScaled, sum, type Row } from '../helpers/experiment.js';
import { runCli, tempDir } from '../helpers/cli.js';
import type { CalibrationResult } from '../../orchestrator/calibrate/runCalibration.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

// The reproduction suite: each catalogue experiment (experiments/README.md) at --scale 0.2,
// asserting the qualitative outcome its file's opening comment promises. The retry-storm
// family, the cache stampede and hedging have their own files in this folder.

/** Whole seconds of the series inside the trigger window. */
function triggerSeconds(s: RunSummary): [number, number] {
  return [Math.ceil(s.trigger.startS), Math.floor(s.trigger.endS)];
}

function baselineGoodput(s: RunSummary): number {
  assert.ok(s.baseline.goodputPerS !== null && s.baseline.goodputPerS > 0, 'a baseline goodput');
  return s.baseline.goodputPerS;
}

/** Mean goodput per second inside the trigger window. */
function goodputDuringTrigger(s: RunSummary, rows: Row[]): number {
  const [a, b] = triggerSeconds(s);
  return sum(rows, 'goodput', a, b) / (b - a);
}

describe('reproduction suite: the catalogue', () => {
  test('lifo-vs-fifo: after the same latency spike, LIFO fails fewer requests and recovers sooner than FIFO', async () => {
    const fifo = await runScaled('experiments/lifo-vs-fifo-fifo.yaml');
    const lifo = await runScaled('experiments/lifo-vs-fifo-lifo.yaml');
    assert.equal(fifo.s.recovered, true, fifo.s.recoveryReason);
    assert.equal(lifo.s.recovered, true, lifo.s.recoveryReason);
    assert.ok(
      failures(lifo.s) < failures(fifo.s),
      `failed origins: LIFO ${failures(lifo.s)}, FIFO ${failures(fifo.s)}`,
    );
    assert.ok(
      lifo.s.recoveryTimeS! <= fifo.s.recoveryTimeS!,
      `recovery: LIFO ${lifo.s.recoveryTimeS} s, FIFO ${fifo.s.recoveryTimeS} s`,
    );
  });

  test('kill-restart: a killed api refuses connections, restarts empty and recovers from the retrying client', async () => {
    const { s } = await runScaled('experiments/kill-restart.yaml');
    assert.ok(s.outcomes['conn-refused'] > 0, 'the kill was felt as refused connections');
    assert.equal(s.metastable, false, s.recoveryReason);
    assert.equal(s.recovered, true);
  });

  test('load-spike: 4x the load offered over the spike; the backlog drains and the recovery time is reported', async () => {
    const { s, rows } = await runScaled('experiments/load-spike.yaml');
    const t = s.triggers[0]!;
    const inSpike =
      sum(rows, 'offered', Math.ceil(t.startS), Math.floor(t.endS)) /
      (Math.floor(t.endS) - Math.ceil(t.startS));
    assert.ok(
      inSpike > 3 * s.baseline.offeredPerS!,
      `offered ${inSpike}/s in the spike vs ${s.baseline.offeredPerS}/s`,
    );
    assert.equal(s.recovered, true, s.recoveryReason);
    assert.ok(s.recoveryTimeS! > 1, `the backlog took time to drain: ${s.recoveryTimeS} s`);
  });

  test('closed-loop-pause: the closed loop, labelled closed, reports no collapse after the pause that collapses the open loop', async () => {
    const { s, out } = await runScaled('experiments/closed-loop-pause.yaml');
    assert.equal(s.load?.model, 'closed');
    assert.ok(
      s.warnings.some((w) => /closed/i.test(w)),
      s.warnings.join('; '),
    );
    assert.equal(s.metastable, false, s.recoveryReason);
    assert.ok(out);
  });

  for (const name of ['db-pause', 'db-partition', 'db-latency'])
    test(`${name}: the database fault is felt through the misses (a degraded mode), and the run recovers`, async () => {
      const { s, rows } = await runScaled(`experiments/${name}.yaml`);
      const [a, b] = triggerSeconds(s);
      const during = goodputDuringTrigger(s, rows);
      const failed = sum(rows, 'failed_http_5xx', a, b) + sum(rows, 'failed_timeout', a, b);
      const p99 = Math.max(...between(rows, a, b).map((r) => Number(r['response_p99_ms'] ?? 0)));
      const baseP99 = s.baseline.latencyMs.p99 ?? 0;
      // Felt: requests fail, or goodput drops, or the tail stretches (latency becomes occupancy).
      assert.ok(
        failed > 0 || during < 0.9 * baselineGoodput(s) || p99 > 2 * baseP99,
        `${name}: goodput ${during}/s, ${failed} failures, p99 up to ${p99} ms (baseline ${baseP99} ms)`,
      );
      assert.ok(sum(rows, 'cache_hits', a, b) > 0, 'hits are still served');
      assert.equal(s.recovered, true, s.recoveryReason);
    });

  test('cache-outage: no degraded mode while Redis is down, and the restarted empty cache leaves it metastable', async () => {
    const { s, rows } = await runScaled('experiments/cache-outage.yaml');
    assert.ok(
      goodputDuringTrigger(s, rows) < 0.5 * baselineGoodput(s),
      'goodput collapses during the outage',
    );
    assert.ok(s.outcomes['conn-refused'] === 0, 'the api itself stays up');
    assert.equal(s.metastable, true, s.recoveryReason);
  });

  test('shed-breaker-oscillation: after the trigger the breaker opens, closes and opens again, goodput swinging', async () => {
    const { s, rows } = await runScaled('experiments/shed-breaker-oscillation.yaml');
    const after = between(rows, Math.floor(s.trigger.startS), rows.length);
    const opens = after.reduce((n, r) => n + Number(r['breaker_opens'] ?? 0), 0);
    assert.ok(opens >= 2, `breaker opens from the trigger on: ${opens}`);
    const base = baselineGoodput(s);
    const g = after.filter((r) => r['phase'] !== 'drain').map((r) => Number(r['goodput'] ?? 0));
    // A swing: from near nothing to near full or back, second to second.
    const swings = g.filter((x, i) => i > 0 && x < 0.2 * base !== g[i - 1]! < 0.2 * base).length;
    assert.ok(swings >= 3, `goodput from the trigger on: ${g.join(' ')}`);
  });

  test("hotos21-retry: the HotOS '21 retry example collapses: amplification near 2, goodput near 0", async () => {
    const { s } = await runScaled('experiments/hotos21-retry.yaml');
    assert.equal(s.metastable, true, s.recoveryReason);
    assert.ok(s.afterTrigger.amplification! >= 1.7, `client amplification ${s.afterTrigger.amplification}`);
    assert.ok(
      s.afterTrigger.goodputPerS! < 0.2 * baselineGoodput(s),
      `goodput ${s.afterTrigger.goodputPerS}/s`,
    );
  });

  test('step-test: metabench calibrate finds the saturation point, the margin against the production peak, and goodput falling past it', async () => {
    const dir = tempDir('step-test');
    const out = join(dir, 'out');
    const r = await runCli(
      ['calibrate', 'experiments/step-test.yaml', '--scale', '0.2', '--out', out, '--quiet'],
      {
        METABENCH_STATE_DIR: join(dir, 'state'),
      },
    );
    assert.equal(r.code, 0, r.stderr);
    const c = JSON.parse(readFileSync(join(out, 'calibration.json'), 'utf8')) as CalibrationResult;
    assert.equal(c.status, 'saturated', c.reason);
    const sat = c.saturation!.offeredPerS;
    assert.ok(sat >= 200 && sat <= 480, `saturation at ${sat}/s, nominal 400/s`);
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

  test('soak: recovers from its small pause, with CPU and memory series for every lab process that level off', async () => {
    const { s, rows } = await runScaled('experiments/soak.yaml');
    assert.equal(s.recovered, true, s.recoveryReason);
    for (const c of ['api', 'redis', 'postgres', 'faultproxy']) {
      const rss = rows.map((r) => r[`proc_${c}_rss_bytes`]).filter((v): v is number => typeof v === 'number');
      assert.ok(rss.length > rows.length / 2, `proc_${c}_rss_bytes is recorded`);
      assert.ok(
        rows.some((r) => typeof r[`proc_${c}_cpu`] === 'number'),
        `proc_${c}_cpu is recorded`,
      );
    }
    const api = rows
      .filter((r) => r['phase'] === 'observe')
      .map((r) => r['proc_api_rss_bytes'])
      .filter((v): v is number => typeof v === 'number');
    const half = Math.floor(api.length / 2);
    const early = Math.max(...api.slice(0, half));
    const late = Math.max(...api.slice(half));
    assert.ok(late < 1.25 * early, `api RSS: ${early} early, ${late} late in the observation`);
  });
});
