import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startApi } from '../../services/api/server.js';
import { parsePrometheusText } from '../../orchestrator/scrape/prometheusText.js';

test('the api serves through c workers, queues the rest, and exports its metrics', async () => {
  const api = await startApi({
    host: '127.0.0.1',
    port: 0,
    workers: 2,
    work: { dist: 'constant', meanMs: 100 },
    seed: 1,
  });
  try {
    const url = `http://127.0.0.1:${api.port}`;
    const t0 = performance.now();
    const done = await Promise.all(
      Array.from({ length: 6 }, async () => {
        const r = await request(`${url}/work`);
        await r.body.text();
        return { status: r.statusCode, at: performance.now() - t0 };
      }),
    );
    assert.ok(done.every((d) => d.status === 200));
    // 6 jobs of 100 ms on 2 workers finish in three waves: the last after about 300 ms.
    const last = Math.max(...done.map((d) => d.at));
    assert.ok(last >= 290, `last finished at ${last} ms`);
    const m = parsePrometheusText(await (await request(`${url}/metrics`)).body.text());
    assert.equal(m.get('api_requests_received_total'), 6);
    assert.equal(m.get('api_requests_completed_total{status="200"}'), 6);
    assert.equal(m.get('api_workers'), 2);
    assert.equal(m.get('api_queue_wait_seconds_count'), 6);
    // Four of the six waited for a worker, two of them for a whole wave more.
    assert.ok(
      m.get('api_queue_wait_seconds_sum')! >= 0.55,
      `queue wait sum ${m.get('api_queue_wait_seconds_sum')}`,
    );
  } finally {
    await api.close();
  }
});

test('the api keeps working on requests whose client already gave up (wasted work)', async () => {
  const api = await startApi({
    host: '127.0.0.1',
    port: 0,
    workers: 1,
    work: { dist: 'constant', meanMs: 150 },
    seed: 1,
  });
  try {
    const url = `http://127.0.0.1:${api.port}`;
    const attempts = Array.from({ length: 3 }, () =>
      request(`${url}/work`, { signal: AbortSignal.timeout(50) }).then(
        () => 'answered',
        () => 'gave up',
      ),
    );
    assert.deepEqual(await Promise.all(attempts), ['gave up', 'gave up', 'gave up']);
    await new Promise((r) => setTimeout(r, 600));
    const m = parsePrometheusText(await (await request(`${url}/metrics`)).body.text());
    assert.equal(m.get('api_requests_received_total'), 3);
    assert.equal(m.get('api_requests_completed_total'), 3, 'every abandoned request was still worked on');
    assert.equal(m.get('api_wasted_work_total'), 3);
  } finally {
    await api.close();
  }
});
