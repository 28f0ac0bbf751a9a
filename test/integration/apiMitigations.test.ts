import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { startApi, type ApiConfig, type Mitigations } from '../../services/api/server.js';
import { parsePrometheusText } from '../../orchestrator/scrape/prometheusText.js';

/** The api on a free loopback port with one mitigation switched on; requests go over real HTTP. */
async function withApi(
  workers: number,
  workMs: number,
  mitigations: Mitigations,
  body: (url: string) => Promise<void>,
  more: Pick<ApiConfig, 'errorCost'> = {},
): Promise<void> {
  const api = await startApi({
    host: '127.0.0.1',
    port: 0,
    workers,
    work: { dist: 'constant', meanMs: workMs },
    seed: 1,
    mitigations,
    ...more,
  });
  try {
    await body(`http://127.0.0.1:${api.port}`);
  } finally {
    await api.close();
  }
}

async function get(url: string, headers: Record<string, string> = {}) {
  const r = await request(`${url}/work`, { headers });
  await r.body.dump();
  return { status: r.statusCode, shed: r.headers['x-shed'] as string | undefined };
}

async function metrics(url: string) {
  return parsePrometheusText(await (await request(`${url}/metrics`)).body.text());
}

test('a bounded queue answers 503 queue_full to what does not fit, at once, and counts it', async () => {
  await withApi(1, 200, { queueBound: 2 }, async (url) => {
    const order: number[] = [];
    const got = await Promise.all(
      Array.from({ length: 6 }, () =>
        get(url).then((r) => {
          order.push(r.status);
          return r;
        }),
      ),
    );
    const ok = got.filter((g) => g.status === 200);
    const shed = got.filter((g) => g.status === 503);
    assert.equal(ok.length, 3, 'one running and two queued are served');
    assert.equal(shed.length, 3);
    assert.ok(shed.every((g) => g.shed === 'queue_full'));
    // Refused on arrival: every 503 came back before the first 200 ms job finished.
    assert.deepEqual(order, [503, 503, 503, 200, 200, 200]);
    const m = await metrics(url);
    assert.equal(m.get('api_rejected_total{reason="queue_full"}'), 3);
    assert.equal(m.get('api_requests_completed_total{status="200"}'), 3);
  });
});

test('queue-time shedding refuses the requests that waited past the limit, without their work', async () => {
  await withApi(1, 100, { shedQueueTimeMs: 150 }, async (url) => {
    // Sojourns: 0, 100, 200, 300 ms: the last two waited past 150 ms.
    const got = await Promise.all(Array.from({ length: 4 }, () => get(url)));
    assert.deepEqual(
      got.map((g) => g.status),
      [200, 200, 503, 503],
    );
    assert.deepEqual(
      got.map((g) => g.shed),
      [undefined, undefined, 'queue_time', 'queue_time'],
    );
    const m = await metrics(url);
    assert.equal(m.get('api_rejected_total{reason="queue_time"}'), 2);
    assert.equal(m.get('api_service_seconds_count'), 2, 'shed requests were not worked on');
  });
});

test('deadline dropping honours x-deadline-ms: an expired request is dropped without doing the work', async () => {
  await withApi(1, 200, { deadlineDrop: true }, async (url) => {
    const first = get(url); // holds the worker for 200 ms
    const expires = get(url, { 'x-deadline-ms': '50' }); // expires while it waits
    const lives = get(url, { 'x-deadline-ms': '5000' });
    const [a, b, c] = await Promise.all([first, expires, lives]);
    assert.equal(a.status, 200);
    assert.deepEqual(b, { status: 503, shed: 'deadline' });
    assert.equal(c.status, 200);
    const already = await get(url, { 'x-deadline-ms': '0' }); // expired on arrival
    assert.deepEqual(already, { status: 503, shed: 'deadline' });
    const m = await metrics(url);
    assert.equal(m.get('api_rejected_total{reason="deadline"}'), 2);
    assert.equal(m.get('api_service_seconds_count'), 2, 'only the two live requests were worked on');
  });
});

test('an error cost holds the worker on a dropped request before its 503, and is counted in seconds', async () => {
  await withApi(
    1,
    100,
    { deadlineDrop: true },
    async (url) => {
      const t0 = performance.now();
      const at = <T>(p: Promise<T>) => p.then((r) => ({ ...r, ms: performance.now() - t0 }));
      const first = at(get(url)); // 0–100
      const expires = at(get(url, { 'x-deadline-ms': '20' })); // dropped at 100: error path 100–400
      const lives = at(get(url, { 'x-deadline-ms': '5000' })); // 400–500
      await new Promise((r) => setTimeout(r, 250));
      const during = await metrics(url);
      assert.equal(during.get('api_busy_workers'), 1, 'the worker is on the error path');
      assert.equal(during.get('api_queue_depth'), 1, 'the live request waits behind it');
      const [a, b, c] = await Promise.all([first, expires, lives]);
      assert.equal(a.status, 200);
      assert.deepEqual([b.status, b.shed], [503, 'deadline']);
      assert.ok(b.ms >= 390, `the drop was answered after its error path (${b.ms.toFixed(0)} ms)`);
      assert.equal(c.status, 200);
      // Without the error cost it would have finished at about 200 ms.
      assert.ok(c.ms >= 490, `the live request waited for the error path (${c.ms.toFixed(0)} ms)`);
      const m = await metrics(url);
      assert.equal(m.get('api_error_path_seconds_total{kind="deadline"}'), 0.3);
      assert.equal(m.get('api_service_seconds_count'), 2, 'the dropped request was not worked on');
    },
    { errorCost: { work: { dist: 'constant', meanMs: 300 } } },
  );
});

test('without deadline dropping the api works on an expired request anyway (the default)', async () => {
  await withApi(1, 20, {}, async (url) => {
    assert.deepEqual(await get(url, { 'x-deadline-ms': '0' }), { status: 200, shed: undefined });
  });
});

test('a concurrency limit refuses what exceeds it with 503 concurrency; LIFO serves the newest first', async () => {
  await withApi(1, 100, { concurrencyLimit: 2 }, async (url) => {
    const got = await Promise.all(Array.from({ length: 4 }, () => get(url)));
    assert.deepEqual(
      got.map((g) => g.shed ?? g.status),
      [200, 200, 'concurrency', 'concurrency'],
    );
  });
  await withApi(1, 100, { queue: 'lifo' }, async (url) => {
    const order: number[] = [];
    const sent = [0, 1, 2, 3].map(async (i) => {
      await new Promise((r) => setTimeout(r, i * 10)); // arrive in order 0, 1, 2, 3
      await get(url);
      order.push(i);
    });
    await Promise.all(sent);
    assert.deepEqual(order, [0, 3, 2, 1]);
  });
});
