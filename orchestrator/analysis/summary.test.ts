import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serverAmplification } from './summary.js';
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
