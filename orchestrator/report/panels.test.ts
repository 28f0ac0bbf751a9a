import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Recorder } from '../../bench/record/Recorder.js';
import { VirtualClock } from '../../foundation/clock.js';
import { createApiMetrics } from '../../services/api/metrics.js';
import { runData } from '../../test/helpers/reportData.js';
import type { Lab } from '../lab/Lab.js';
import { ProcSampler } from '../lab/proc/procSampler.js';
import { timeseriesCsv } from '../results/timeseries.js';
import { Scraper } from '../scrape/scraper.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { readFileSync } from 'node:fs';
import { runFigures } from './figures/run.js';
import { axisTitle, columnPrefix, PANELS, SERIES, unitOf } from './panels.js';

/**
 * The columns of a timeseries.csv as a lab run writes it: the api's real metrics (one
 * rejection by reason, a DB pool) scraped by the real scraper, this process sampled as the
 * api by the real /proc sampler, and the recorder's series.
 */
async function labColumns(): Promise<string[]> {
  const pool = { busyWorkers: 1, queueDepth: 2, workers: 4 };
  const api = createApiMetrics(pool, () => ({ poolWaiting: 1, poolBusy: 2 }));
  const clock = new VirtualClock();
  const lab = {
    scrapeText: async () => {
      api.received.inc();
      api.rejected.inc({ reason: 'queue_full' });
      return api.registry.metrics();
    },
  } as unknown as Lab;
  const scraper = new Scraper(lab, 'api', clock);
  const procs = new ProcSampler(() => [{ component: 'api', pid: process.pid, command: 'node' }], clock);
  scraper.start();
  procs.start();
  await clock.advanceTo(2000);
  const server = await scraper.stop();
  const proc = await procs.stop();
  const plan = planRun(
    parseExperiment(
      readFileSync(new URL('../../../experiments/retry-storm.yaml', import.meta.url), 'utf8'),
      'retry-storm.yaml',
    ),
    { scale: 1, run: 1 },
  );
  const rec = new Recorder({});
  rec.tick(2000);
  return timeseriesCsv(plan, rec.close(), server, proc).split('\n')[0]!.split(',');
}

/** `rejected_{reason}` → a pattern for each of its columns (the value as the scraper writes it). */
const columnPattern = (c: string): RegExp =>
  new RegExp(`^${c.replace(/\{[a-z]+\}/g, '[A-Za-z0-9_]+').replace(/[.]/g, '\\.')}$`);

test("every column a panel's series names is one a lab run's timeseries.csv has", async () => {
  const header = await labColumns();
  const missing: string[] = [];
  let checked = 0;
  for (const p of PANELS)
    for (const s of p.series)
      for (const c of s.columns ?? []) {
        checked++;
        if (!header.some((h) => columnPattern(c).test(h))) missing.push(`${p.title} / ${s.name}: ${c}`);
      }
  assert.deepEqual(missing, [], `timeseries.csv columns: ${header.join(' ')}`);
  assert.ok(checked >= 15, `${checked} columns checked`);
  // The patterns do not match what they should not.
  assert.ok(!columnPattern('failed_{kind}').test('failed'));
  assert.ok(columnPattern('proc_{component}_cpu').test('proc_api_cpu'));
});

test('the definition is consistent: a family names its label, every series is drawn or plotted, the report draws what it names', () => {
  for (const p of PANELS)
    for (const s of p.series) {
      assert.ok(s.promql !== undefined || s.columns !== undefined, `${p.title} / ${s.name}: shown nowhere`);
      if (s.each !== undefined)
        for (const c of s.columns ?? []) assert.ok(c.includes(`{${s.each}}`), `${c} has {${s.each}}`);
      else for (const c of s.columns ?? []) assert.ok(!c.includes('{'), `${c}: a column, not a family`);
    }
  // Every series of SERIES sits in a panel of the dashboard.
  for (const s of Object.values(SERIES))
    assert.ok(
      PANELS.some((p) => p.series.includes(s)),
      s.columns[0],
    );
  assert.equal(columnPrefix(SERIES.rejected), 'rejected_');
  assert.equal(unitOf(SERIES.busyWorkers), 'workers');
  assert.equal(unitOf(SERIES.goodput), 'req/s');
  assert.equal(axisTitle('response time', 'ms', 'log scale'), 'response time (ms, log scale)');
});

test('the run figures name their series and units as the definition does', () => {
  const figs = new Map(runFigures(runData(1), '').map((f) => [f.id, f]));
  const spec = (id: string): string => JSON.stringify(figs.get(id)?.spec);
  assert.deepEqual(figs.get('throughput')?.series, [
    SERIES.offered.name,
    SERIES.attempts.name,
    SERIES.goodput.name,
  ]);
  assert.ok(spec('throughput').includes(axisTitle('requests per second', unitOf(SERIES.goodput))));
  assert.deepEqual(figs.get('amplification')?.series, [
    SERIES.amplificationClient.name,
    SERIES.amplificationServer.name,
  ]);
  assert.deepEqual(figs.get('latency')?.series, [
    SERIES.responseP50.name,
    SERIES.responseP99.name,
    SERIES.responseMax.name,
  ]);
  assert.ok(spec('latency').includes('response time (ms, log scale)'));
  assert.deepEqual(figs.get('server')?.series, [SERIES.queueDepth.name, SERIES.busyWorkers.name]);
  assert.ok(spec('server').includes('busy workers (workers)'));
});
