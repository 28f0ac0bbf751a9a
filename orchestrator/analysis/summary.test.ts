import { test } from 'node:test';
import assert from 'node:assert/strict';
import { policySummary, serverAmplification } from './summary.js';
import { Recorder } from '../../bench/record/Recorder.js';
import type { ServerSeries } from '../scrape/scraper.js';
import { parsePrometheusText } from '../scrape/prometheusText.js';

function server(received: (number | null)[], span: (number | null)[]): ServerSeries {
  const empty = received.map(() => null);
  return {
    received,
    span,
    completed: empty,
    wasted: empty,
    cpuSeconds: empty,
    queueDepth: empty,
    busyWorkers: empty,
    rssBytes: empty,
  };
}

test('server-side amplification divides by the origins of exactly the buckets each scrape covers', () => {
  // Buckets 0-5, 100 origins each. The api is paused in buckets 2-3: no scrape answers,
  // and the scrape closing bucket 4 carries 3 buckets of requests (a burst of 900).
  const offered = [100, 100, 100, 100, 100, 100];
  const s = server([100, 100, null, null, 900, 300], [1, 1, null, null, 3, 1]);
  assert.equal(serverAmplification(s, offered, 0, 2), 1);
  assert.equal(serverAmplification(s, offered, 4, 5), 3); // 900 / 300 intended over buckets 2-4
  assert.equal(serverAmplification(s, offered, 5, 6), 3);
  assert.equal(serverAmplification(s, offered, 2, 4), null); // nothing answered there: unmeasured
  assert.equal(serverAmplification(s, offered, 0, 6), (100 + 100 + 900 + 300) / 600);
});

test('the Prometheus text reader sums labelled series and keeps each one', () => {
  const m = parsePrometheusText(
    [
      '# HELP api_requests_completed_total x',
      '# TYPE api_requests_completed_total counter',
      'api_requests_completed_total{status="200"} 40',
      'api_requests_completed_total{status="503"} 2',
      'api_queue_depth 7',
      'process_resident_memory_bytes 1.5e8 1700000000000',
      'garbage line',
    ].join('\n'),
  );
  assert.equal(m.get('api_requests_completed_total'), 42);
  assert.equal(m.get('api_requests_completed_total{status="503"}'), 2);
  assert.equal(m.get('api_queue_depth'), 7);
  assert.equal(m.get('process_resident_memory_bytes'), 1.5e8);
  assert.equal(m.has('garbage'), false);
});

test('per-policy counters: null for a policy the client does not use, counts for those it does', () => {
  const rec = new Recorder({
    policies: { clients: 2, budget: true, breaker: true, throttle: false, hedge: false, abandon: true },
  });
  rec.policy({ type: 'retry-denied', client: 0, origin: 1, reason: 'budget', atMs: 10 });
  rec.policy({ type: 'retry-denied', client: 1, origin: 2, reason: 'budget', atMs: 1500 });
  rec.policy({ type: 'retry', client: 0, origin: 3, number: 2, after: 'timeout', delayMs: 0, atMs: 20 });
  rec.policy({ type: 'breaker', client: 1, from: 'closed', to: 'open', atMs: 500 });
  rec.policy({ type: 'rejected', client: 1, origin: 5, number: 1, by: 'breaker', atMs: 600 });
  rec.policy({ type: 'breaker', client: 1, from: 'open', to: 'half-open', atMs: 2500 });
  rec.offered({ id: 9, intendedMs: 0, deadlineMs: Infinity });
  rec.outcome(
    { id: 9, intendedMs: 0, deadlineMs: Infinity },
    {
      kind: 'abandoned',
      status: 0,
      sentMs: 0,
      endMs: 2800,
      attempt: 1,
    },
  );
  rec.tick(3000);
  const r = rec.close();
  const p = policySummary(r);
  assert.deepEqual(p, {
    clients: 2,
    retries: 1,
    retriesDeniedByBudget: 2,
    retriesCutByDeadline: 0,
    retriesExhausted: 0,
    breakerOpens: 1,
    breakerRejected: 1,
    breakerOpenS: 2, // client 1 open from 0.5 s to 2.5 s
    throttled: null,
    hedgesSent: null,
    hedgesWon: null,
    hedgesDenied: null,
    cancelledAttempts: 0,
    abandoned: 1,
  });
  // The series, per second, averaged over the 2 clients.
  assert.deepEqual(r.series.breakerOpen, [0.25, 0.5, 0.25]);
  assert.deepEqual(r.series.breakerHalfOpen, [0, 0, 0.25]);
  assert.deepEqual(r.series.retriesDeniedBudget, [1, 1, 0]);
  assert.deepEqual(r.series.rejectedBreaker, [1, 0, 0]);
});
