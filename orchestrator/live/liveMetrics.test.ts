import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Attempt, AttemptResult, Origin } from '../../bench/outcome.js';
import { parsePrometheusText } from '../scrape/prometheusText.js';
import { LiveRecorder, createLiveMetrics } from './liveMetrics.js';
import { startMetricsServer } from './metricsServer.js';
import { RunObservers } from './observers.js';
import type { Lab } from '../lab/Lab.js';
import { freePort } from '../lab/local/dataServices.js';

const origin = (id: number, intendedMs: number, deadlineMs = Infinity): Origin =>
  ({ id, intendedMs, deadlineMs }) as Origin;
const result = (kind: AttemptResult['kind'], sentMs: number, endMs: number): AttemptResult =>
  ({ kind, sentMs, endMs, attempt: 1, status: kind === 'ok' ? 200 : 0 }) as AttemptResult;

test('LiveRecorder counts offered, attempts, goodput, failures by kind and response times as it records', async () => {
  const live = createLiveMetrics();
  const rec = new LiveRecorder({}).observe(live);
  const a = origin(1, 0);
  const b = origin(2, 10, 100);
  const c = origin(3, 20);
  for (const o of [a, b, c]) rec.offered(o);
  rec.attempt({ origin: a, number: 1 } as Attempt, result('ok', 0, 30));
  rec.outcome(a, result('ok', 0, 30));
  rec.attempt({ origin: b, number: 1 } as Attempt, result('timeout', 10, 60));
  rec.attempt({ origin: b, number: 2 } as Attempt, result('ok', 60, 150));
  rec.outcome(b, result('ok', 60, 150)); // answered after its deadline
  const text = await live.registry.metrics();
  const m = parsePrometheusText(text);
  assert.equal(m.get('metabench_offered_total'), 3);
  assert.equal(m.get('metabench_attempts_total'), 3);
  assert.equal(m.get('metabench_goodput_total'), 1);
  assert.equal(m.get('metabench_failures_total{kind="deadline-exceeded"}'), 1);
  assert.equal(
    m.get('metabench_failures_total{kind="timeout"}'),
    0,
    'every kind is exported, at 0 when none',
  );
  assert.equal(m.get('metabench_in_flight'), 1, 'origin 3 is still in flight');
  assert.equal(m.get('metabench_response_seconds_count'), 1);
  assert.equal(m.get('metabench_response_seconds_sum'), 0.03);
  assert.equal(m.get('metabench_response_seconds_bucket{le="0.025"}'), 0);
  assert.equal(m.get('metabench_response_seconds_bucket{le="0.05"}'), 1);
  // The base Recorder saw the same calls.
  const closed = rec.close();
  assert.equal(closed.totals.offered, 3);
});

test('component CPU and memory come from the lab processes, per component', async () => {
  const live = createLiveMetrics(() => [{ component: 'api', pid: process.pid, command: 'this test' }]);
  const m = parsePrometheusText(await live.registry.metrics());
  assert.ok((m.get('metabench_component_cpu_seconds_total{component="api"}') ?? 0) > 0);
  assert.ok((m.get('metabench_component_memory_bytes{component="api"}') ?? 0) > 1e6);
});

test('the metrics server serves /metrics on loopback, 404 elsewhere, and says which hosts it could not bind', async () => {
  const live = createLiveMetrics();
  live.offered.inc(5);
  const srv = await startMetricsServer(live.registry, ['127.0.0.1', '192.0.2.1'], 0);
  try {
    assert.equal(srv.addresses.length, 1);
    assert.match(srv.failed[0]!, /^192\.0\.2\.1:0 \(EADDRNOTAVAIL\)$/);
    const res = await fetch(`http://${srv.addresses[0]}/metrics`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /^metabench_offered_total 5$/m);
    assert.equal((await fetch(`http://${srv.addresses[0]}/`)).status, 404);
  } finally {
    await srv.close();
  }
});

test('a listener with a token refuses a scrape without it or with another, and serves one with it', async () => {
  const live = createLiveMetrics();
  live.offered.inc(2);
  const token = 'k7-test-token';
  const srv = await startMetricsServer(live.registry, [{ host: '127.0.0.1', token }], 0);
  try {
    const url = `http://${srv.addresses[0]}/metrics`;
    const none = await fetch(url);
    assert.equal(none.status, 401);
    assert.equal(none.headers.get('www-authenticate'), 'Bearer');
    assert.doesNotMatch(await none.text(), /metabench_offered_total/);
    const wrong = await fetch(url, { headers: { authorization: 'Bearer k7-test-tokeN' } });
    assert.equal(wrong.status, 401);
    const basic = await fetch(url, { headers: { authorization: `Basic ${token}` } });
    assert.equal(basic.status, 401);
    const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(ok.status, 200);
    assert.match(await ok.text(), /^metabench_offered_total 2$/m);
  } finally {
    await srv.close();
  }
});

test('a run’s observers serve the swarm Prometheus’s scrape address only with its token, and 127.0.0.1 without', async () => {
  const port = await freePort('127.0.0.1');
  const scrapePort = await freePort('127.0.0.1');
  const said: string[] = [];
  const obs = new RunObservers(
    { metricsPort: port, metricsScrape: { host: '127.0.0.1', port: scrapePort, token: 'tok-9' } },
    { processes: () => [] } as unknown as Lab,
    (l) => said.push(l),
  );
  await obs.start();
  try {
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 200);
    const scrape = `http://127.0.0.1:${scrapePort}/metrics`;
    assert.equal((await fetch(scrape)).status, 401);
    assert.equal((await fetch(scrape, { headers: { authorization: 'Bearer tok-9' } })).status, 200);
    assert.match(said.join('\n'), new RegExp(`127\\.0\\.0\\.1:${scrapePort}/metrics`));
    assert.doesNotMatch(said.join('\n'), /tok-9/, 'the token is not printed');
  } finally {
    await obs.finish({ experiment: 'x', run: 1, originEpochMs: undefined, endMs: 0, triggers: [] });
  }
});
