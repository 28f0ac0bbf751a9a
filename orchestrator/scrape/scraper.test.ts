import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import type { Lab } from '../lab/Lab.js';
import { PartialScrapeError } from '../lab/partialScrape.js';
import { PROVIDER_COLUMNS, ProviderScraper, Scraper } from './scraper.js';

/** A lab whose /metrics answers the next scripted text (or fails on null). */
function scriptedLab(texts: (string | null)[]): Lab {
  let i = 0;
  return {
    scrapeText: async () => {
      const t = texts[Math.min(i++, texts.length - 1)];
      if (t === null || t === undefined) throw new Error('no answer');
      return t;
    },
  } as unknown as Lab;
}

const text = (o: { received: number; hits?: number; waiting?: number; rejected?: Record<string, number> }) =>
  [
    `api_requests_received_total ${o.received}`,
    ...(o.hits !== undefined ? [`api_cache_hits_total ${o.hits}`, `api_cache_misses_total 0`] : []),
    ...(o.waiting !== undefined ? [`api_db_pool_waiting ${o.waiting}`] : []),
    ...Object.entries(o.rejected ?? {}).map(([r, v]) => `api_rejected_total{reason="${r}"} ${v}`),
  ].join('\n');

test('the scraper turns rejections by reason, cache and DB pool metrics into their own columns', async () => {
  const clock = new VirtualClock();
  const lab = scriptedLab([
    text({ received: 0, hits: 0, waiting: 0 }),
    text({ received: 100, hits: 90, waiting: 0 }),
    text({ received: 250, hits: 100, waiting: 12, rejected: { queue_full: 30 } }),
    null, // paused: no answer
    text({ received: 400, hits: 110, waiting: 3, rejected: { queue_full: 50, queue_time: 5 } }),
  ]);
  const s = new Scraper(lab, 'api', clock);
  s.start();
  await clock.advanceTo(4000);
  const series = await s.stop();
  assert.deepEqual(series.received, [100, 150, null, 150]);
  assert.deepEqual(series.span, [1, 1, null, 2]);
  const x = series.extra!;
  assert.deepEqual(x['cache_hits'], [90, 10, null, 10]);
  assert.deepEqual(x['db_pool_waiting'], [0, 12, null, 3]);
  // A reason's column appears with its first rejection; answered buckets before it are 0.
  assert.deepEqual(x['rejected_queue_full'], [0, 30, null, 20]);
  assert.deepEqual(x['rejected_queue_time'], [0, 0, null, 5]);
});

test('a partial answer (the JVM collecting, its GC log read) records its GC series and leaves the rest unanswered', async () => {
  const clock = new VirtualClock();
  const gc = (s: number) => `jvm_gc_time_seconds_total ${s}\njvm_gc_collections_total ${s * 10}`;
  const texts = [
    `${text({ received: 0, rejected: { queue_full: 0 } })}\n${gc(0)}`,
    `${text({ received: 80, rejected: { queue_full: 0 } })}\n${gc(0.01)}`,
    new PartialScrapeError(gc(0.9), new Error('timeout')),
    new PartialScrapeError(gc(1.8), new Error('timeout')),
    `${text({ received: 110, rejected: { queue_full: 40 } })}\n${gc(2.5)}`,
  ];
  let i = 0;
  const lab = {
    scrapeText: async () => {
      const t = texts[Math.min(i++, texts.length - 1)]!;
      if (t instanceof Error) throw t;
      return t;
    },
  } as unknown as Lab;
  const s = new Scraper(lab, 'api', clock);
  s.start();
  await clock.advanceTo(4000);
  const series = await s.stop();
  // The request series: unanswered while partial, then the whole increase over 3 buckets.
  assert.deepEqual(series.received, [80, null, null, 30]);
  assert.deepEqual(series.span, [1, null, null, 3]);
  assert.deepEqual(series.extra!['rejected_queue_full'], [0, null, null, 40]);
  // GC time per bucket from every answer, partial or not: nothing lost, nothing counted twice.
  const g = series.extra!['gc_seconds']!.map((v) => (v === null ? null : Math.round(v * 100) / 100));
  assert.deepEqual(g, [0.01, 0.89, 0.9, 0.7]);
  assert.deepEqual(
    series.extra!['gc_collections'],
    [0.1, 8.9, 9, 7].map((v) => v),
  );
});

test('the error-path seconds by kind become their own columns, in seconds per bucket', async () => {
  const clock = new VirtualClock();
  const path = (o: Record<string, number>): string =>
    [
      'api_requests_received_total 0',
      ...Object.entries(o).map(([k, v]) => `api_error_path_seconds_total{kind="${k}"} ${v}`),
    ].join('\n');
  const lab = scriptedLab([path({}), path({ timeout: 0.25 }), path({ timeout: 1.75, dependency: 0.5 })]);
  const s = new Scraper(lab, 'api', clock);
  s.start();
  await clock.advanceTo(2000);
  const x = (await s.stop()).extra!;
  assert.deepEqual(x['error_path_seconds_timeout'], [0.25, 1.5]);
  assert.deepEqual(x['error_path_seconds_dependency'], [0, 0.5]);
});

test("the provider's series: requests, errors by kind, cancellations and tokens per bucket, every column always", async () => {
  const clock = new VirtualClock();
  const stub = (o: { ok: number; cut?: number; gone?: number; tokens: number }): string =>
    [
      `llm_stub_requests_total{endpoint="chat",outcome="ok"} ${o.ok}`,
      `llm_stub_requests_total{endpoint="embeddings",outcome="ok"} 1`,
      ...(o.cut !== undefined ? [`llm_stub_requests_total{endpoint="chat",outcome="cut"} ${o.cut}`] : []),
      ...(o.gone !== undefined
        ? [`llm_stub_requests_total{endpoint="chat",outcome="client_gone"} ${o.gone}`]
        : []),
      `llm_stub_output_tokens_total ${o.tokens}`,
    ].join('\n');
  const lab = scriptedLab([
    stub({ ok: 0, tokens: 0 }),
    stub({ ok: 3, tokens: 120 }),
    stub({ ok: 5, cut: 1, tokens: 200 }),
    null, // the stub killed: no answer
    stub({ ok: 9, cut: 1, gone: 2, tokens: 390 }),
  ]);
  const s = new ProviderScraper(lab, clock);
  s.start();
  await clock.advanceTo(4000);
  const x = await s.stop();
  assert.deepEqual(Object.keys(x).sort(), [...PROVIDER_COLUMNS].sort());
  assert.ok(PROVIDER_COLUMNS.includes('llm_provider_errors_server_error'));
  assert.deepEqual(x['llm_provider_requests'], [3, 3, null, 6]);
  assert.deepEqual(x['llm_provider_errors_cut'], [0, 1, null, 0]);
  assert.deepEqual(x['llm_provider_errors_server_error'], [0, 0, null, 0]);
  assert.deepEqual(x['llm_provider_cancelled'], [0, 0, null, 2]);
  assert.deepEqual(x['llm_provider_tokens'], [120, 80, null, 190]);
});
