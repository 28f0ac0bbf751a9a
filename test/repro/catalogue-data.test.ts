import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { between, runScaled, sum } from '../helpers/experiment.js';
import { assertClaimed } from '../helpers/catalogue.js';
import {
  baselineGoodput,
  goodputDuringTrigger,
  hitRatio,
  mean,
  numbers,
  triggerSeconds,
} from '../helpers/seriesChecks.js';

// The reproduction suite, the catalogue's the cache and the database: db-pause, db-partition, db-latency, cache-outage: each experiment
// (experiments/README.md) at the suite's scale (test/helpers/catalogue.ts), asserting the
// outcome class its row claims and the evidence the row names. The catalogue is in three
// files so test/run.js can run them side by side; the retry-storm family, the cache
// experiments, the client policies and the LLM platform have their own files.

describe('reproduction suite: the catalogue, the cache and the database', () => {
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
      assertClaimed(name, s);
    });

  test('cache-outage: no degraded mode while Redis is down, and the restarted empty cache leaves it metastable', async () => {
    const { s, rows } = await runScaled('experiments/cache-outage.yaml');
    assert.ok(
      goodputDuringTrigger(s, rows) < 0.5 * baselineGoodput(s),
      'goodput collapses during the outage',
    );
    assert.ok(s.outcomes['conn-refused'] === 0, 'the api itself stays up');
    assertClaimed('cache-outage', s);
    // What sustains it: the cache stays cold after Redis is back.
    const end = rows.filter((r) => r['phase'] !== 'drain').length;
    assert.ok(hitRatio(rows, end - 5, end) < 0.5, `final hit ratio ${hitRatio(rows, end - 5, end)}`);
  });
});
