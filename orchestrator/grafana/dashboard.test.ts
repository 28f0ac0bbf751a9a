import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { createApiMetrics } from '../../services/api/metrics.js';
import { createLiveMetrics } from '../live/liveMetrics.js';
import { DASHBOARD_UID, flattenPanels } from './client.js';
import { buildDashboard, dashboardFile, legendOf } from './dashboard.js';
import { DASHBOARD_FILE } from './writeDashboard.js';
import { PANELS } from '../report/panels.js';
import { baseMetric, metricNames } from '../../test/helpers/promql.js';

const root = (p: string): string => fileURLToPath(new URL(`../../../${p}`, import.meta.url));

interface Panel {
  id: number;
  title: string;
  type: string;
  datasource?: { uid?: string };
  targets?: { expr?: string; refId?: string }[];
}

const dashboard = JSON.parse(readFileSync(root('grafana/dashboards/metabench.json'), 'utf8')) as {
  uid: string;
  title: string;
  panels: Panel[];
};

/** The series Prometheus's recording rules define (prometheus.yml's rule_files; none yet). */
function recorded(): string[] {
  const config = parse(readFileSync(root('prometheus/prometheus.yml'), 'utf8')) as { rule_files?: string[] };
  return (config.rule_files ?? []).flatMap((f) => {
    const rules = parse(readFileSync(root(`prometheus/${f}`), 'utf8')) as {
      groups?: { rules?: { record?: string }[] }[];
    };
    return (rules.groups ?? []).flatMap((g) => (g.rules ?? []).flatMap((r) => (r.record ? [r.record] : [])));
  });
}

/** Every metric the api and the orchestrator export, read from their prom-client registries, and every recorded series. */
async function exported(): Promise<{ names: Set<string>; histograms: Set<string> }> {
  const api = createApiMetrics({ busyWorkers: 0, queueDepth: 0, workers: 1 }, () => ({
    poolWaiting: 0,
    poolBusy: 0,
  }));
  const live = createLiveMetrics();
  const all = [...(await api.registry.getMetricsAsJSON()), ...(await live.registry.getMetricsAsJSON())];
  return {
    names: new Set([...all.map((m) => m.name), ...recorded()]),
    histograms: new Set(all.filter((m) => String(m.type) === 'histogram').map((m) => m.name)),
  };
}

test('metricNames reads the metrics of a PromQL expression, not its functions, labels or keywords', () => {
  assert.deepEqual(
    metricNames('histogram_quantile(0.99, sum by (le) (rate(api_service_seconds_bucket{job="api"}[10s])))'),
    ['api_service_seconds_bucket'],
  );
  assert.deepEqual(metricNames('rate(a_total[5s]) / (rate(b_total[5s]) + c) > 0 and on (x) d'), [
    'a_total',
    'b_total',
    'c',
    'd',
  ]);
  assert.deepEqual(
    baseMetric('api_service_seconds_bucket', new Set(['api_service_seconds'])),
    'api_service_seconds',
  );
  assert.deepEqual(baseMetric('x_count', new Set()), 'x_count');
});

test('the dashboard is "metabench", its panels have unique ids and read the provisioned Prometheus', () => {
  assert.equal(dashboard.uid, DASHBOARD_UID);
  assert.equal(dashboard.title, 'metabench');
  const ds = parse(readFileSync(root('grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
    datasources: { uid: string; type: string; url: string }[];
  };
  const prom = ds.datasources.find((d) => d.type === 'prometheus');
  assert.ok(prom, 'a Prometheus datasource is provisioned');
  assert.equal(prom.url, 'http://prometheus:9090');
  const panels = flattenPanels(dashboard.panels);
  assert.equal(new Set(panels.map((p) => p.id)).size, panels.length, 'panel ids are unique');
  for (const p of dashboard.panels) {
    assert.ok((p.targets ?? []).length > 0, `panel "${p.title}" has a query`);
    assert.equal(p.datasource?.uid, prom.uid, `panel "${p.title}" reads uid ${prom.uid}`);
    for (const t of p.targets ?? [])
      assert.equal((t as { datasource?: { uid?: string } }).datasource?.uid ?? prom.uid, prom.uid);
  }
});

test('every panel query names only metrics the api or the orchestrator export', async () => {
  const { names, histograms } = await exported();
  const unknown: string[] = [];
  let checked = 0;
  for (const p of dashboard.panels)
    for (const t of p.targets ?? []) {
      const read = metricNames(t.expr ?? '');
      assert.ok(read.length > 0, `panel "${p.title}" ${t.refId}: the query names a metric`);
      for (const n of read) {
        checked++;
        if (!names.has(baseMetric(n, histograms))) unknown.push(`panel "${p.title}" ${t.refId}: ${n}`);
      }
    }
  assert.deepEqual(unknown, []);
  assert.ok(checked >= 20, `${checked} metric references checked`);
});

test('the dashboard covers what the issue lists: goodput, amplification, latency, queue, rejections, cache, DB pool, CPU, memory', async () => {
  const used = new Set(
    dashboard.panels.flatMap((p) => (p.targets ?? []).flatMap((t) => metricNames(t.expr ?? ''))),
  );
  for (const m of [
    'metabench_offered_total',
    'metabench_attempts_total',
    'metabench_goodput_total',
    'api_requests_received_total',
    'metabench_response_seconds_bucket',
    'api_queue_depth',
    'api_busy_workers',
    'api_rejected_total',
    'api_cache_hits_total',
    'api_db_pool_waiting',
    'metabench_component_cpu_seconds_total',
    'metabench_component_memory_bytes',
  ])
    assert.ok(used.has(m), `a panel reads ${m}`);
});

test('the provisioned dashboard is the one the panel definition generates (a hand edit or a stale file fails)', async () => {
  assert.equal(
    readFileSync(DASHBOARD_FILE, 'utf8'),
    await dashboardFile(DASHBOARD_FILE),
    'grafana/dashboards/metabench.json is generated: run `npm run grafana:dashboard` and commit it',
  );
  const built = buildDashboard();
  assert.deepEqual(
    built.panels?.map((p) => ('title' in p ? p.title : '')),
    PANELS.map((p) => p.title),
  );
  // Each plotted series is one query, its legend the definition's name.
  assert.deepEqual(
    dashboard.panels.map((p) => (p.targets ?? []).map((t) => (t as { legendFormat?: string }).legendFormat)),
    PANELS.map((p) => p.series.filter((s) => s.promql !== undefined).map(legendOf)),
  );
  assert.equal(dashboard.panels.length, PANELS.length);
});

/** `11.2.0` → [11, 2]. */
const majorMinor = (v: string): [number, number] => {
  const m = /^v?(\d+)\.(\d+)/.exec(v);
  assert.ok(m, `${v}: a version`);
  return [Number(m[1]), Number(m[2])];
};

test("the SDK's Grafana schema is not newer than the lab's Grafana (an older schema is migrated on load, a newer one is not)", () => {
  const pkg = JSON.parse(readFileSync(root('package.json'), 'utf8')) as {
    devDependencies: Record<string, string>;
  };
  const sdk = pkg.devDependencies['@grafana/grafana-foundation-sdk'];
  assert.ok(sdk, 'the SDK is a pinned dev dependency');
  assert.match(sdk, /^\d+\.\d+\.\d+-cog/, 'pinned to one release of a Grafana-versioned branch');
  const compose = readFileSync(root('docker-compose.yml'), 'utf8');
  const image = /grafana\/grafana:(\d+\.\d+\.\d+)/.exec(compose)?.[1];
  assert.ok(image, "docker-compose.yml names the lab's Grafana image");
  const [sm, sn] = majorMinor(sdk);
  const [gm, gn] = majorMinor(image);
  assert.ok(sm < gm || (sm === gm && sn <= gn), `SDK for Grafana ${sm}.${sn}, lab runs Grafana ${image}`);
  // Grafana 11.2 reads schemas up to 39.
  assert.ok((buildDashboard().schemaVersion ?? 0) <= 39);
});
