import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { between, failures, reproRuntimeArgs, runScaled, sum, type Row } from '../helpers/experiment.js';
import { describeOutcome, outcomeOf, suiteScale } from '../helpers/catalogue.js';
import { runCli, tempDir } from '../helpers/cli.js';
import type { CalibrationResult } from '../../orchestrator/calibrate/runCalibration.js';
import type { RunSummary } from '../../orchestrator/analysis/summary.js';

// The reproduction suite: each catalogue experiment (experiments/README.md) at the
// suite's scale (test/helpers/catalogue.ts), asserting the outcome class its row claims
// and the evidence the row names. The retry-storm family, the cache experiments, the
// client policies and the LLM platform have their own files in this folder.

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

function numbers(rows: Row[], col: string): number[] {
  return rows.map((r) => r[col]).filter((v): v is number => typeof v === 'number');
}

function mean(xs: number[]): number {
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
}

/** Cache hit ratio over the seconds [fromS, toS) from the api's counters. */
function hitRatio(rows: Row[], fromS: number, toS: number): number {
  const h = sum(rows, 'cache_hits', fromS, toS);
  return h / Math.max(1, h + sum(rows, 'cache_misses', fromS, toS));
}

describe('reproduction suite: the catalogue', () => {
  test('lifo-vs-fifo: both recover; FIFO only once its backlog of dead requests drains, with many more timeouts; LIFO at once, with fewer failures', async () => {
    const fifo = await runScaled('experiments/lifo-vs-fifo-fifo.yaml');
    const lifo = await runScaled('experiments/lifo-vs-fifo-lifo.yaml');
    assert.equal(outcomeOf(fifo.s), 'recovered', describeOutcome(fifo.s));
    assert.equal(outcomeOf(lifo.s), 'recovered', describeOutcome(lifo.s));
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
    assert.equal(outcomeOf(s), 'recovered', describeOutcome(s));
  });

  test('load-spike: 4x the load offered over the spike; it recovers, and the recovery time measures the backlog drain', async () => {
    const { s, rows } = await runScaled('experiments/load-spike.yaml');
    const t = s.triggers[0]!;
    const inSpike =
      sum(rows, 'offered', Math.ceil(t.startS), Math.floor(t.endS)) /
      (Math.floor(t.endS) - Math.ceil(t.startS));
    const base = s.baseline.offeredPerS!;
    assert.ok(inSpike > 3 * base, `offered ${inSpike}/s in the spike vs ${base}/s`);
    assert.equal(outcomeOf(s), 'recovered', describeOutcome(s));
    // The backlog at nominal capacity μ: (4λ − μ)·D built up, drained at μ − λ. Goodput
    // returns a little before the queue is empty (once waits fall under the 1 s timeout),
    // and the api serves less than nominal on a shared machine (a longer drain): at least
    // half the nominal drain time.
    const mu = s.capacity.usedPerS ?? s.capacity.nominalPerS;
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
    assert.equal(outcomeOf(s), 'recovered', describeOutcome(s));
  });

  for (const name of ['db-pause', 'db-partition', 'db-latency'])
    test(`${name}: the pool's waiting series rises in the trigger window; a degraded mode (hits served, misses fail); it recovers`, async () => {
      const { s, rows } = await runScaled(`experiments/${name}.yaml`);
      const [a, b] = triggerSeconds(s);
      // The pool's waiting queue (the api's db_pool_waiting gauge, scraped every second):
      // its mean over the trigger window above anything the baseline saw.
      const baseWaiting = Math.max(
        ...numbers(
          rows.filter((r) => r['phase'] === 'baseline'),
          'db_pool_waiting',
        ),
      );
      const waiting = mean(numbers(between(rows, a, b), 'db_pool_waiting'));
      assert.ok(
        waiting >= 1 && waiting > baseWaiting,
        `${name}: db_pool_waiting ${waiting} on average in the trigger window, at most ${baseWaiting} in the baseline`,
      );
      // Degraded, not collapsed and not unaffected: the hits are served (goodput stays above
      // nothing, the cache keeps hitting) while misses fail (5xx/timeouts at the client; a
      // miss fails up to its 500 ms request timeout after it was counted: one more second).
      const during = goodputDuringTrigger(s, rows);
      const base = baselineGoodput(s);
      assert.ok(during > 0.05 * base && during < 0.9 * base, `${name}: goodput ${during}/s vs ${base}/s`);
      assert.ok(sum(rows, 'cache_hits', a, b) > 0, 'hits are still served');
      const failed = sum(rows, 'failed_http_5xx', a, b + 1) + sum(rows, 'failed_timeout', a, b + 1);
      const misses = sum(rows, 'cache_misses', a, b);
      assert.ok(failed > 0, `${name}: no request failed during the trigger (${misses} misses)`);
      if (name !== 'db-latency')
        // The database is unreachable: every miss fails (a latency only fails those that wait too long).
        assert.ok(failed >= 0.5 * misses, `${name}: ${failed} failed, ${misses} misses`);
      else {
        const p99 = Math.max(...numbers(between(rows, a, b), 'response_p99_ms'));
        const baseP99 = s.baseline.latencyMs.p99!;
        assert.ok(p99 > 2 * baseP99, `p99 up to ${p99} ms, baseline ${baseP99} ms`);
      }
      assert.equal(outcomeOf(s), 'recovered', describeOutcome(s));
    });

  test('cache-outage: no degraded mode while Redis is down, and the restarted empty cache leaves it metastable', async () => {
    const { s, rows } = await runScaled('experiments/cache-outage.yaml');
    assert.ok(
      goodputDuringTrigger(s, rows) < 0.5 * baselineGoodput(s),
      'goodput collapses during the outage',
    );
    assert.ok(s.outcomes['conn-refused'] === 0, 'the api itself stays up');
    assert.equal(outcomeOf(s), 'metastable', describeOutcome(s));
    // What sustains it: the cache stays cold after Redis is back.
    const end = rows.filter((r) => r['phase'] !== 'drain').length;
    assert.ok(hitRatio(rows, end - 5, end) < 0.5, `final hit ratio ${hitRatio(rows, end - 5, end)}`);
  });

  test('shed-breaker-oscillation: invalid, because the loop oscillates with no trigger: the breaker opens in the baseline, whose hypothesis fails, and reopens after the pause has ended', async () => {
    const { s, rows } = await runScaled(
      'experiments/shed-breaker-oscillation.yaml',
      [],
      {},
      { invalid: true },
    );
    assert.equal(outcomeOf(s), 'invalid', describeOutcome(s));
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
    assert.equal(outcomeOf(s), 'metastable', describeOutcome(s));
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

  test("soak: recovers from its small pause; every lab process's memory is bounded (the last third's peak RSS at most 1.2x the first third's)", async () => {
    const { s, rows } = await runScaled('experiments/soak.yaml');
    assert.equal(outcomeOf(s), 'recovered', describeOutcome(s));
    // From the end of the warm-up (caches and pools warm) to the end of the observation.
    const measured = rows.filter((r) => r['phase'] !== 'warmup' && r['phase'] !== 'drain');
    const third = Math.floor(measured.length / 3);
    for (const c of ['api', 'redis', 'postgres', 'faultproxy']) {
      const col = `proc_${c}_rss_bytes`;
      assert.ok(numbers(measured, col).length > measured.length / 2, `${col} is recorded`);
      assert.ok(
        rows.some((r) => typeof r[`proc_${c}_cpu`] === 'number'),
        `proc_${c}_cpu is recorded`,
      );
      const first = Math.max(...numbers(measured.slice(0, third), col));
      const last = Math.max(...numbers(measured.slice(measured.length - third), col));
      assert.ok(
        last <= 1.2 * first,
        `${c} RSS peaks at ${first} B in the first third, ${last} B in the last`,
      );
    }
  });
});
