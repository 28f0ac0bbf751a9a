import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { isBenchError } from '../../foundation/errors.js';
import { runAnnotations } from './annotations.js';
import { GrafanaClient } from './client.js';
import { exportPanels, runsTimeRange, slug } from './exportPanels.js';
import { buildDashboard } from './dashboard.js';
import { PANELS } from '../report/panels.js';

/** The dashboard the stand-in serves: two panels, one in a row. */
const TWO_PANELS: unknown = {
  panels: [
    { id: 1, type: 'timeseries', title: 'Offered vs attempts vs goodput' },
    { id: 9, type: 'row', title: 'more', panels: [{ id: 2, type: 'timeseries', title: 'DB pool' }] },
  ],
};
let served = TWO_PANELS;

/** A stand-in Grafana on loopback: records requests, serves a dashboard (`served`) and PNGs. */
const seen: { method: string; url: string; auth: string | undefined; body: string }[] = [];
let server: Server;
let base = '';
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from('fake'),
]);

before(async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body });
      const url = new URL(req.url ?? '/', 'http://x');
      if (req.method === 'POST' && url.pathname === '/api/annotations')
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"id":1,"message":"Annotation added"}');
      else if (url.pathname === '/api/dashboards/uid/metabench')
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ dashboard: served }));
      else if (url.pathname.startsWith('/render/d-solo/metabench/')) {
        if (url.searchParams.get('panelId') === '404')
          res.writeHead(500).end('{"message":"Rendering failed: no image renderer available/installed"}');
        else res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      } else res.writeHead(404).end('{"message":"Not found"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const a = server.address();
  base = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
});
after(() => new Promise<void>((r) => server.close(() => r())));

function resultsFolder(runs: { startedAt: string; totalMs: number }[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-grafana-'));
  runs.forEach((r, i) => {
    mkdirSync(join(dir, `run-${i + 1}`));
    writeFileSync(
      join(dir, `run-${i + 1}`, 'manifest.json'),
      JSON.stringify({ startedAt: r.startedAt, plan: { totalMs: r.totalMs } }),
    );
  });
  return dir;
}

test('runAnnotations: the run as a region, then each trigger window, in epoch ms with tags', () => {
  const a = runAnnotations({
    experiment: 'retry-storm',
    run: 2,
    originEpochMs: 1_000_000,
    endMs: 60_000,
    triggers: [
      { kind: 'pause', target: 'api', startMs: 20_000, endMs: 22_000 },
      { kind: 'kill', target: 'redis', startMs: 30_000, endMs: 29_000, error: 'no such container' },
    ],
  });
  assert.deepEqual(a[0], {
    time: 1_000_000,
    timeEnd: 1_060_000,
    tags: ['metabench', 'run', 'retry-storm', 'run-2'],
    text: 'retry-storm run 2',
  });
  assert.deepEqual(a[1], {
    time: 1_020_000,
    timeEnd: 1_022_000,
    tags: ['metabench', 'trigger', 'pause', 'api', 'retry-storm', 'run-2'],
    text: 'pause api',
  });
  assert.equal(a[2]!.timeEnd, 1_030_000, 'a window never ends before it starts');
  assert.match(a[2]!.text, /failed: no such container/);
});

test('GrafanaClient.annotate posts to /api/annotations with basic auth from the URL', async () => {
  seen.length = 0;
  const c = new GrafanaClient(base.replace('http://', 'http://admin:s%40cret@'), undefined);
  await c.annotate({ time: 1000.4, timeEnd: 2000.6, tags: ['metabench'], text: 'x' });
  assert.equal(seen.length, 1);
  assert.equal(seen[0]!.method, 'POST');
  assert.equal(seen[0]!.url, '/api/annotations');
  assert.equal(seen[0]!.auth, `Basic ${Buffer.from('admin:s@cret').toString('base64')}`);
  assert.deepEqual(JSON.parse(seen[0]!.body), {
    dashboardUID: 'metabench',
    time: 1000,
    timeEnd: 2001,
    tags: ['metabench'],
    text: 'x',
  });
});

test('runsTimeRange spans every run of the folder, with margins; bad folders are named', () => {
  const dir = resultsFolder([
    { startedAt: '2026-12-01T07:00:00.000Z', totalMs: 60_000 },
    { startedAt: '2026-12-01T07:02:00.000Z', totalMs: 30_000 },
  ]);
  try {
    const r = runsTimeRange(dir);
    assert.equal(r.runs, 2);
    assert.equal(r.fromMs, Date.parse('2026-12-01T07:00:00.000Z') - 10_000);
    assert.equal(r.toMs, Date.parse('2026-12-01T07:02:30.000Z') + 30_000);
  } finally {
    rmSync(dir, { recursive: true });
  }
  const empty = mkdtempSync(join(tmpdir(), 'metabench-grafana-'));
  try {
    assert.throws(
      () => runsTimeRange(empty),
      (e: unknown) => isBenchError(e) && /no run-\*\/manifest\.json/.test(e.message),
    );
  } finally {
    rmSync(empty, { recursive: true });
  }
});

test('exportPanels renders each panel (rows opened) over the runs into grafana/<id>-<title>.png', async () => {
  const dir = resultsFolder([{ startedAt: '2026-12-01T07:00:00.000Z', totalMs: 60_000 }]);
  seen.length = 0;
  try {
    const files = await exportPanels(new GrafanaClient(base, undefined), dir, { width: 800, height: 400 });
    assert.deepEqual(readdirSync(join(dir, 'grafana')).sort(), [
      '01-offered-vs-attempts-vs-goodput.png',
      '02-db-pool.png',
    ]);
    assert.equal(files.length, 2);
    assert.deepEqual(readFileSync(files[0]!), PNG);
    const render = new URL(seen.find((s) => s.url.startsWith('/render/'))!.url, 'http://x');
    assert.equal(render.pathname, '/render/d-solo/metabench/metabench');
    assert.equal(render.searchParams.get('from'), String(Date.parse('2026-12-01T07:00:00.000Z') - 10_000));
    assert.equal(render.searchParams.get('to'), String(Date.parse('2026-12-01T07:01:00.000Z') + 30_000));
    assert.equal(render.searchParams.get('width'), '800');
  } finally {
    rmSync(dir, { recursive: true });
  }
});

test('export grafana over the provisioned dashboard writes one PNG per panel of the definition, named by its position and title', async () => {
  const dir = resultsFolder([{ startedAt: '2026-12-01T07:00:00.000Z', totalMs: 60_000 }]);
  served = buildDashboard();
  try {
    await exportPanels(new GrafanaClient(base, undefined), dir, { width: 800, height: 400 });
    assert.deepEqual(
      readdirSync(join(dir, 'grafana')).sort(),
      PANELS.map((p, i) => `${String(i + 1).padStart(2, '0')}-${slug(p.title)}.png`),
    );
  } finally {
    served = TWO_PANELS;
    rmSync(dir, { recursive: true });
  }
});

test('a Grafana that does not answer, or cannot render, fails with a message saying so', async () => {
  const down = new GrafanaClient('http://127.0.0.1:9', undefined);
  await assert.rejects(
    down.panels(),
    (e: unknown) => isBenchError(e) && /cannot reach Grafana at http:\/\/127\.0\.0\.1:9/.test(e.message),
  );
  const c = new GrafanaClient(base, undefined);
  await assert.rejects(
    c.renderPanel(404, 0, 1),
    (e: unknown) => isBenchError(e) && /HTTP 500 Rendering failed/.test(e.message),
  );
  assert.throws(
    () => new GrafanaClient('not a url'),
    (e: unknown) => isBenchError(e) && /not a URL/.test(e.message),
  );
  assert.equal(slug('CPU per container (cores)'), 'cpu-per-container-cores');
});
