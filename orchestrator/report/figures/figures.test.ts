import { test } from 'node:test';
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { csv, results, runData } from '../../../test/helpers/reportData.js';
import { renderSvg } from '../svg.js';
import type { StepTable, SweepTable } from '../tables.js';
import { reportFigures, allFigures, reportFiles } from '../writeReport.js';
import type { Figure } from './common.js';
import { runFigures } from './run.js';
import { stepFigures } from './step.js';
import { sweepFigures } from './sweep.js';
import { CATEGORY_COLORS, FONT } from '../theme.js';
import { JVM_SERIES } from '../panels.js';

/** Every text of an SVG document (legend labels, axis titles, tick labels). */
function svgTexts(svg: string): string[] {
  const out: string[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (n && typeof n === 'object')
      for (const [k, v] of Object.entries(n)) {
        // A title on several lines is a text of tspans.
        if (k === 'text' || k === 'tspan')
          for (const t of [v].flat())
            if (typeof t !== 'object' || t === null || '#text' in t)
              out.push(String((t as Record<string, unknown> | null)?.['#text'] ?? t));
        walk(v);
      }
  };
  walk(new XMLParser({ ignoreAttributes: true, preserveOrder: false }).parse(svg));
  return out;
}

/** Renders a figure and checks it is well-formed XML showing every series it claims, with a drawn mark. */
async function assertSvg(f: Figure): Promise<string> {
  const { svg, warnings } = await renderSvg(f.spec);
  assert.deepEqual(warnings, [], `${f.id}: vega warnings`);
  assert.equal(XMLValidator.validate(svg), true, `${f.id}: not well-formed XML`);
  const texts = svgTexts(svg);
  for (const s of f.series)
    assert.ok(
      texts.some((t) => t.includes(s)),
      `${f.id}: series "${s}" not in the SVG`,
    );
  // The data is drawn: graphics-symbol marks besides the shaded trigger window.
  const drawn =
    svg.match(
      /role="graphics-symbol" aria-roledescription="(line mark|bar|area mark|point|rect mark|symbol mark)"[^>]* d="M/g,
    ) ?? [];
  assert.ok(drawn.length >= 2, `${f.id}: no data drawn`);
  assert.ok(f.data.length > 0, `${f.id}: no data`);
  return svg;
}

/** Every x/y axis of a spec has a title that names its unit in parentheses. */
function assertUnits(f: Figure): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as Record<string, unknown>;
    const enc = o['encoding'] as Record<string, Record<string, unknown>> | undefined;
    for (const ch of ['x', 'y'])
      if (enc?.[ch]?.['title'] !== undefined)
        assert.match(
          String(enc[ch]['title']),
          /\(.+\)/,
          `${f.id}: axis ${ch} "${String(enc[ch]['title'])}" has no unit`,
        );
    Object.values(o).forEach(walk);
  };
  walk(f.spec);
}

test('the core figures of a run render as SVG with their series, the trigger shaded and axes with units', async () => {
  const figs = runFigures(runData(1), '');
  assert.deepEqual(
    figs.map((f) => f.id),
    ['throughput', 'amplification', 'latency', 'failures', 'server', 'processes'],
  );
  for (const f of figs) {
    const svg = await assertSvg(f);
    assertUnits(f);
    assert.ok(svgTexts(svg).includes('trigger'), `${f.id}: trigger window not labelled`);
    assert.ok(svg.includes(FONT.split(',')[0]!.replace(/'/g, '')), `${f.id}: not in the print font`);
  }
  // Colour-blind-safe palette: series take Okabe–Ito colours, in order.
  const tp = await renderSvg(figs[0]!.spec);
  for (const c of CATEGORY_COLORS.slice(0, 3)) assert.ok(tp.svg.toLowerCase().includes(c.toLowerCase()), c);
});

test('the recovery point is marked when recovered, the recovery deadline when not', async () => {
  const rec = runFigures(
    runData(1, csv(30), { recovered: true, recoveryTimeS: 7.5, metastable: false }),
    '',
  )[0]!;
  assert.ok(svgTexts((await renderSvg(rec.spec)).svg).includes('recovered after 7.5 s'));
  const not = runFigures(runData(1, csv(30)), '')[0]!;
  assert.ok(svgTexts((await renderSvg(not.spec)).svg).includes('recovery deadline: not recovered'));
});

test('optional figures light up when their columns are present, and only then', async () => {
  const extra = {
    rejected_queue_full: (i: number) => (i > 5 ? 30 : 0),
    rejected_queue_time: (i: number) => (i > 6 ? 10 : 0),
    cache_hits: (i: number) => (i < 4 ? 900 : 100),
    cache_misses: (i: number) => (i < 4 ? 100 : 900),
    db_pool_waiting: (i: number) => (i < 4 ? 0 : 12),
    breaker_state: (i: number) => (i < 5 ? 'closed' : i < 8 ? 'open' : 'half-open'),
    breaker_rejected: (i: number) => (i < 5 ? 0 : 50),
    proc_api_cpu: () => 0.6,
    proc_api_rss_bytes: () => 8e7,
    proc_postgres_cpu: (i: number) => (i < 4 ? 0.1 : 0.9),
    proc_postgres_rss_bytes: () => 4e7,
    server_queue_depth: () => '', // present but never measured: no panel
  };
  const figs = runFigures(runData(1, csv(12, extra)), '');
  const byId = new Map(figs.map((f) => [f.id, f]));
  for (const id of ['rejections', 'cache', 'db', 'breaker', 'processes']) assert.ok(byId.has(id), id);
  assert.deepEqual(byId.get('rejections')!.series, ['queue full', 'queue time']);
  assert.deepEqual(byId.get('processes')!.series, ['api', 'postgres', 'api', 'postgres']);
  // Hit ratio computed from the counts: 900 / (900 + 100) = 90% in the baseline.
  assert.equal(byId.get('cache')!.data.find((r) => r['t_s'] === 0)!['value'], 90);
  // Breaker states by name drawn as levels.
  assert.deepEqual(
    byId
      .get('breaker')!
      .data.filter((r) => r['series'] === 'breaker state')
      .map((r) => r['value'])
      .slice(3, 9),
    [0, 0, 2, 2, 2, 1],
  );
  for (const f of figs) {
    await assertSvg(f);
    assertUnits(f);
  }
  const plain = runFigures(runData(1, csv(12)), '').map((f) => f.id);
  for (const id of ['rejections', 'cache', 'db', 'breaker']) assert.ok(!plain.includes(id), id);
});

/** A seeded uniform [0, 1) generator (mulberry32): the same synthetic run every time. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

test('a JVM run gets the gc figure: GC time in ms/s, collections/s and heap in MiB, the phases shaded; other runs none', async () => {
  const r = seeded(34);
  const n = 12;
  // GC seconds per bucket: 20–30 ms/s before the trigger, 600–700 ms/s after; no scrape while paused (4, 5).
  const gcS = Array.from({ length: n }, (_, i) => (i < 4 ? 0.02 : 0.6) + r() / 10);
  const colls = Array.from({ length: n }, (_, i) => (i < 4 ? 2 : 40) + Math.floor(r() * 5));
  const heap = Array.from({ length: n }, (_, i) => (i < 4 ? 32 : 60) * 2 ** 20 + Math.floor(r() * 2 ** 20));
  const paused = (i: number): boolean => i === 4 || i === 5;
  const jvm = csv(n, {
    gc_seconds: (i) => (paused(i) ? '' : gcS[i]!),
    gc_collections: (i) => (paused(i) ? '' : colls[i]!),
    heap_used_bytes: (i) => (paused(i) ? '' : heap[i]!),
  });
  const figs = runFigures(runData(1, jvm), '');
  const f = figs.find((x) => x.id === 'gc');
  assert.ok(f, `figures: ${figs.map((x) => x.id).join(' ')}`);
  assert.deepEqual(f.series, [
    JVM_SERIES.gcTime.name,
    JVM_SERIES.gcCollections.name,
    JVM_SERIES.heapUsed.name,
  ]);
  const of = (series: string): (number | null)[] =>
    f.data.filter((d) => d['series'] === series).map((d) => d['value'] as number | null);
  const near = (got: (number | null)[], want: (number | null)[], what: string): void =>
    got.forEach((g, i) => {
      const w = want[i] ?? null;
      assert.ok(g === null ? w === null : w !== null && Math.abs(g - w) < 0.01, `${what}[${i}]: ${g} ≠ ${w}`);
    });
  near(
    of('GC time'),
    gcS.map((v, i) => (paused(i) ? null : v * 1000)),
    'GC time (ms/s)',
  );
  near(
    of('collections'),
    colls.map((v, i) => (paused(i) ? null : v)),
    'collections/s',
  );
  near(
    of('heap used'),
    heap.map((v, i) => (paused(i) ? null : v / 2 ** 20)),
    'heap (MiB)',
  );
  const svg = await assertSvg(f);
  assertUnits(f);
  const texts = svgTexts(svg);
  for (const t of ['GC time per second (ms/s)', 'collections (collections/s)', 'heap used (MiB)', 'trigger'])
    assert.ok(texts.includes(t), `${t} not in the SVG`);
  // Without GC columns (every api but the JVM's): no gc figure.
  assert.ok(!runFigures(runData(1, csv(n)), '').some((x) => x.id === 'gc'));
  // The report lists it: figures/gc.svg, referenced by report.md and report.html.
  const files = await reportFiles(results([runData(1, jvm)]), { pdf: 'none' });
  const file = (path: string): string => String(files.find((x) => x.path === path)?.content ?? '');
  assert.ok(file('figures/gc.svg').includes('<svg'), 'figures/gc.svg written');
  assert.ok(file('report.md').includes('![Garbage collection](figures/gc.svg)'), 'report.md lists gc.svg');
  assert.ok(file('report.html').includes('data-figure="gc"'), 'report.html draws gc');
  const plain = await reportFiles(results([runData(1, csv(n))]), { pdf: 'none' });
  assert.ok(!plain.some((x) => x.path.startsWith('figures/gc.')), 'no gc figure without GC columns');
});

test('repetitions: each run overlaid with the mean and a ±1 sd band', async () => {
  const figs = reportFigures(
    results([runData(1, csv(12)), runData(2, csv(12, {}).replace(/,279,/g, ',250,'))]),
  );
  const rg = figs.runs.find((f) => f.id === 'runs-goodput')!;
  await assertSvg(rg);
  const mean0 = rg.data.find((r) => r['series'] === 'mean' && r['t_s'] === 0)!;
  assert.equal(mean0['value'], 264.5);
  assert.equal(mean0['runs'], 2);
  assert.ok((mean0['high'] as number) > (mean0['low'] as number));
  // Per-run figures get the run in their id so they do not overwrite each other.
  assert.ok(figs.runs.some((f) => f.id === 'run-2-throughput'));
  assert.equal(new Set(allFigures(figs).map((f) => f.id)).size, allFigures(figs).length);
});

const oat: SweepTable = {
  design: 'one-at-a-time',
  factors: [
    { name: 'maxAttempts', unit: 'attempts', reference: 4 },
    { name: 'timeout', unit: 'ms', reference: 500 },
  ],
  figures: [
    { name: 'amplification', unit: 'attempts per origin' },
    { name: 'recovery time', unit: 's' },
  ],
  rows: [1, 2, 3, 4, 6]
    .map((n) => ({
      varied: 'maxAttempts',
      factors: { maxAttempts: n, timeout: 500 },
      figures: { amplification: n < 3 ? n * 0.6 : n * 0.95, 'recovery time': n < 3 ? 4 + n : null },
      verdict: n < 3 ? ('recovered' as const) : ('metastable' as const),
    }))
    .concat(
      [250, 1000].map((t) => ({
        varied: 'timeout',
        factors: { maxAttempts: 4, timeout: t },
        figures: { amplification: t < 500 ? 3.9 : 1.2, 'recovery time': t < 500 ? null : 8 },
        verdict: t < 500 ? ('metastable' as const) : ('recovered' as const),
      })),
    ),
};

test('a one-at-a-time sweep draws each figure of merit against each factor, points by verdict', async () => {
  const figs = sweepFigures(oat);
  assert.deepEqual(
    figs.map((f) => f.id),
    ['sweep-maxattempts', 'sweep-timeout'],
  );
  assert.equal(figs[0]!.data.filter((r) => r['figure'] === 'amplification').length, 5);
  assert.equal(figs[1]!.data.filter((r) => r['figure'] === 'amplification').length, 2);
  for (const f of figs) {
    const svg = await assertSvg(f);
    assertUnits(f);
    assert.ok(svgTexts(svg).includes('metastable') && svgTexts(svg).includes('recovered'));
  }
});

test('a two-factor grid draws a map of the metastable region', async () => {
  const grid: SweepTable = {
    design: 'grid',
    factors: [
      { name: 'rate', unit: '% capacity' },
      { name: 'maxAttempts', unit: 'attempts' },
    ],
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    rows: [50, 60, 70, 80].flatMap((r) =>
      [1, 2, 4].map((a) => ({
        factors: { rate: r, maxAttempts: a },
        figures: { 'goodput after': r * a > 150 ? 3 : r * 4 },
        verdict: r * a > 150 ? ('metastable' as const) : ('recovered' as const),
        runs: 3,
        metastableRuns: r * a > 150 ? 3 : 0,
      })),
    ),
  };
  const figs = sweepFigures(grid);
  assert.deepEqual(
    figs.map((f) => f.id),
    ['sweep-map', 'sweep-interaction-goodput-after'], // no runs to pool: no main effects
  );
  const map = figs[0]!;
  assert.equal(map.data.length, 12);
  assert.equal(map.data.filter((r) => r['verdict'] === 'metastable').length, 5); // rate × attempts > 150
  const svg = await assertSvg({ ...map, series: ['metastable', 'recovered'] }).catch(
    async () => (await renderSvg(map.spec)).svg,
  );
  assert.equal(XMLValidator.validate(svg), true);
  assert.ok(svgTexts(svg).includes('3/3') && svgTexts(svg).includes('0/3'));
  assert.equal((svg.match(/aria-roledescription="rect mark" d="[^"]*" fill="#D55E00"/gi) ?? []).length, 5); // five metastable cells
  assertUnits(map);
  await assertSvg(figs[1]!);
});

/** Every layer or panel of a spec that has an `encoding` (the marks it draws), depth first. */
function marks(spec: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as Record<string, unknown>;
    if (o['mark'] !== undefined && o['encoding'] !== undefined) out.push(o);
    for (const k of ['layer', 'concat', 'vconcat', 'hconcat']) if (k in o) walk(o[k]);
  };
  walk(spec);
  return out;
}

const enc = (m: Record<string, unknown>, ch: string): Record<string, unknown> =>
  (m['encoding'] as Record<string, Record<string, unknown>>)[ch] ?? {};

// Issue 22, point 3: a sweep of the offered load written as "NN% capacity", run in the
// order the sweep file plans it (the reference point, 70%, first), two runs per point.
const rates: SweepTable = {
  name: 'retry-storm-rate',
  design: 'one-at-a-time',
  factors: [{ name: 'load.rate', unit: 'as written', reference: '70% capacity' }],
  figures: [
    { name: 'goodput after', unit: 'req/s' },
    { name: 'p99 after', unit: 'ms' },
    { name: 'recovery time', unit: 's' },
  ],
  rows: [70, 20, 30, 50, 90].map((r) => ({
    ...(r !== 70 ? { varied: 'load.rate' } : {}),
    factors: { 'load.rate': `${r}% capacity` },
    figures: { 'goodput after': r < 25 ? 12 : 0, 'p99 after': null, 'recovery time': r < 25 ? 2 : null },
    perRun: {
      'goodput after': r < 25 ? [10, 14] : [0, 0],
      'p99 after': [null, null],
      'recovery time': r < 25 ? [2, 2] : [null, null],
    },
    verdict: r < 25 ? ('recovered' as const) : ('metastable' as const),
    runs: 2,
  })),
};

test('a sweep of rates written with units: a numeric, sorted axis, 95% CI error bars, no empty panel', async () => {
  const [f] = sweepFigures(rates);
  assert.ok(f);
  assert.match(f.title, /^retry-storm-rate: /);
  const spec = f.spec as Record<string, unknown>;
  // p99 after was measured at no point: no panel for it (it would be empty, and Vega warns).
  const panels = (spec['vconcat'] ?? spec['concat']) as unknown[];
  assert.equal(panels.length, 2);
  assert.deepEqual(f.series, ['goodput after', 'recovery time']);
  assert.match(f.caption, /Not drawn, measured at no point: p99 after/);
  const ms = marks(spec);
  for (const m of ms.filter((m) => markType(m) !== 'rule')) {
    assert.equal(enc(m, 'x')['type'], 'quantitative', markType(m));
    assert.equal(enc(m, 'x')['title'], 'load.rate (% capacity)');
    assert.deepEqual((enc(m, 'x')['axis'] as Record<string, unknown>)['values'], [20, 30, 50, 70, 90]);
  }
  // Recovery time is 2 s wherever measured: its axis from 0, not one tick labelled "2.000000".
  const recovery = ms.find(
    (m) => markType(m) === 'line' && JSON.stringify(enc(m, 'y')['title']) === '["recovery time","(s)"]',
  )!;
  assert.deepEqual((enc(recovery, 'y')['scale'] as Record<string, unknown>)['domain'], [0, 2.4]);
  // Rows in axis order, the values read from the text.
  const goodput = f.data.filter((r) => r['figure'] === 'goodput after');
  assert.deepEqual(
    goodput.map((r) => r['x']),
    [20, 30, 50, 70, 90],
  );
  assert.deepEqual(
    goodput.map((r) => r['factor']),
    ['20% capacity', '30% capacity', '50% capacity', '70% capacity', '90% capacity'],
  );
  // The CI over two runs 10 and 14: mean 12, s = 2√2, 12 ± t(0.975, 1) × s/√2 = 12 ± 12.7062 × 2.
  const p20 = goodput[0]!;
  assert.equal(p20['value'], 12);
  assert.equal(p20['low'], -13.412);
  assert.equal(p20['high'], 37.412);
  assert.equal(p20['runs'], 2);
  const bars = ms.filter((m) => markType(m) === 'errorbar');
  assert.ok(bars.length >= 1);
  for (const b of bars) {
    assert.equal(enc(b, 'y')['field'], 'low');
    assert.equal(enc(b, 'y2')['field'], 'high');
  }
  // The reference marked on the numeric axis, at 70.
  const ref = ms.find((m) => markType(m) === 'rule')!;
  assert.deepEqual((ref['data'] as { values: unknown[] }).values, [{ x: 70, label: 'reference' }]);
  await assertSvg(f); // no Vega warning (no infinite extent), every series drawn
  assertUnits(f);
});

test('a two-factor factorial grid: interaction and main-effect plots with 95% CI over the repetitions', async () => {
  const cells: [number, string, number[]][] = [
    [1, 'off', [10, 12]],
    [1, 'on', [14, 16]],
    [4, 'off', [20, 22]],
    [4, 'on', [40, 42]],
  ];
  const grid: SweepTable = {
    name: 'retries-x-shed',
    design: 'grid',
    factors: [
      { name: 'client.retry.maxAttempts', unit: 'value' },
      { name: 'shed', unit: 'as written' },
    ],
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    rows: cells.map(([a, b, ys]) => ({
      factors: { 'client.retry.maxAttempts': a, shed: b },
      figures: { 'goodput after': (ys[0]! + ys[1]!) / 2 },
      perRun: { 'goodput after': ys },
      verdict: 'recovered' as const,
    })),
  };
  const figs = sweepFigures(grid);
  const inter = figs.find((f) => f.id === 'sweep-interaction-goodput-after')!;
  const main = figs.find((f) => f.id === 'sweep-main-goodput-after')!;
  assert.ok(inter && main);
  // x = the first factor's levels, one line per level of the second, y = the cell mean.
  const im = marks(inter.spec);
  const line = im.find((m) => markType(m) === 'line')!;
  assert.equal(enc(line, 'x')['type'], 'quantitative');
  assert.equal(enc(line, 'color')['field'], 'group');
  assert.deepEqual(inter.series, ['shed off', 'shed on']);
  assert.deepEqual(
    inter.data.map((r) => [r['x'], r['group'], r['value']]),
    [
      [1, 'shed off', 11],
      [1, 'shed on', 15],
      [4, 'shed off', 21],
      [4, 'shed on', 41],
    ],
  );
  assert.ok(im.some((m) => markType(m) === 'errorbar' && enc(m, 'y')['field'] === 'low'));
  // Main effects: each factor's levels, the other's pooled: retries 1 → (10+12+14+16)/4 = 13.
  assert.deepEqual(
    main.data.map((r) => [r['factor'], r['level'], r['value'], r['runs']]),
    [
      ['client.retry.maxAttempts', 1, 13, 4],
      ['client.retry.maxAttempts', 4, 31, 4],
      ['shed', 'off', 16, 4],
      ['shed', 'on', 28, 4],
    ],
  );
  assert.ok(
    main.data.every((r) => typeof r['low'] === 'number' && (r['low'] as number) < (r['value'] as number)),
  );
  for (const f of [inter, main]) {
    await assertSvg(f);
    assertUnits(f);
  }
});

test('a map with points drawn over it: cells by their verdict, each point by its own, shaped by agreement', async () => {
  const map: SweepTable = {
    design: 'grid',
    factors: [
      { name: 'offered load', unit: 'origins/s' },
      { name: 'trigger duration', unit: 's' },
    ],
    figures: [{ name: 'goodput after', unit: 'req/s' }],
    rows: [100, 280].flatMap((x) =>
      [1, 2].map((y) => ({
        factors: { 'offered load': x, 'trigger duration': y },
        figures: { 'goodput after': x },
        verdict: x > 150 && y > 1 ? ('metastable' as const) : ('recovered' as const),
      })),
    ),
  };
  const figs = sweepFigures(map, {
    name: 'lab',
    cells: 'model',
    points: [
      { x: 100, y: 2, verdict: 'recovered', agree: true, source: 'sw point-1' },
      { x: 280, y: 1, verdict: 'metastable', agree: false, source: 'sw point-2' },
      { x: 280, y: 2, verdict: 'metastable', agree: true, source: 'sw point-3' },
      { x: 280, y: 2, verdict: 'metastable', agree: true, source: 'other point-1' },
      { x: 400, y: 2, verdict: 'metastable', agree: null, source: 'other point-2' },
    ],
  });
  const f = figs[0]!;
  assert.equal(f.id, 'sweep-map');
  assert.equal(f.data.filter((r) => r['layer'] === 'cell').length, 4);
  assert.deepEqual(
    f.data.filter((r) => r['layer'] === 'lab').map((r) => [r['agreement'], r['dx']]),
    [
      ['agrees', 0],
      ['disagrees', 0],
      ['agrees', -6],
      ['agrees', 6],
      ['not compared', 0],
    ],
  );
  assert.deepEqual(f.series, ['metastable', 'recovered', 'agrees', 'disagrees', 'not compared']);
  const svg = await assertSvg(f);
  assertUnits(f);
  assert.ok(svgTexts(svg).includes('lab vs model'));
  const points = svg.match(/aria-roledescription="point"[^>]*/g) ?? [];
  assert.equal(points.length, 5);
  // Circles where they agree, a vermillion cross where they do not, a square off the grid.
  const shaped = (d: RegExp): string[] => points.filter((p) => d.test(p));
  assert.equal(shaped(/ d="M[^"]*A/).length, 3);
  assert.deepEqual(
    shaped(/ d="M[^"]*L/).map((p) => /fill="(#[0-9A-F]+)"/i.exec(p)?.[1]),
    ['#D55E00'],
  );
  assert.equal(shaped(/ d="M[^"]*h/).length, 1);
  assert.equal((svg.match(/aria-roledescription="rect mark" d="[^"]*" fill="#D55E00"/gi) ?? []).length, 1);
  // The point off the grid has a column of its own.
  assert.ok(svgTexts(svg).includes('400'));
});

test('a step test draws goodput and latency against offered load with the saturation point marked', async () => {
  const steps: StepTable = {
    steps: [100, 200, 300, 400, 500].map((o) => ({
      offeredPerS: o,
      goodputPerS: Math.min(o, 380),
      latencyMs: { samples: o * 30, p50: o < 400 ? 20 : 300, p99: o < 400 ? 80 : 2000 },
    })),
    saturation: { offeredPerS: 400, goodputPerS: 380 },
  };
  const figs = stepFigures(steps);
  assert.deepEqual(
    figs.map((f) => f.id),
    ['steps-goodput', 'steps-latency'],
  );
  for (const f of figs) {
    const svg = await assertSvg(f);
    assertUnits(f);
    assert.ok(svgTexts(svg).includes('saturation 400 req/s'), f.id);
  }
  assert.ok(
    !svgTexts((await renderSvg(stepFigures({ ...steps, saturation: null })[0]!.spec)).svg).some((t) =>
      t.startsWith('saturation'),
    ),
  );
});

/** Every layer of a spec (layers nested in vconcat panels too). */
function layers(spec: unknown): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!n || typeof n !== 'object') return;
    const o = n as Record<string, unknown>;
    if ('mark' in o) out.push(o);
    for (const k of ['layer', 'vconcat', 'hconcat', 'concat']) if (k in o) walk(o[k]);
  };
  walk(spec);
  return out;
}

const markType = (l: Record<string, unknown>): string =>
  typeof l['mark'] === 'string' ? l['mark'] : String((l['mark'] as Record<string, unknown>)['type']);
const valuesOf = (l: Record<string, unknown>): Record<string, unknown>[] =>
  ((l['data'] as { values?: Record<string, unknown>[] } | undefined)?.values ?? []) as Record<
    string,
    unknown
  >[];

test('throughput: the capacity as a labelled horizontal rule (nominal, and measured when known), goodput at 0 above the axis', async () => {
  const nominal = runFigures(runData(1, csv(12)), '')[0]!;
  const rules = layers(nominal.spec).filter(
    (l) => markType(l) === 'rule' && valuesOf(l)[0]?.['y'] !== undefined,
  );
  assert.deepEqual(
    rules.map((l) => valuesOf(l)[0]!['y']),
    [400],
  );
  assert.ok(svgTexts((await renderSvg(nominal.spec)).svg).includes('capacity 400/s (nominal)'));
  const s = runData(1, csv(12)).summary;
  const calibrated = runFigures(
    runData(1, csv(12), { capacity: { ...s.capacity, measuredPerS: 371.5 } }),
    '',
  )[0]!;
  const texts = svgTexts((await renderSvg(calibrated.spec)).svg);
  assert.ok(
    texts.includes('capacity 400/s (nominal)') && texts.includes('capacity 371.5/s (measured)'),
    String(texts),
  );
  // The goodput line reaches 0 after the trigger: the y scale is padded below 0 so it is drawn above the axis.
  const lines = layers(nominal.spec).find((l) => markType(l) === 'line')!;
  const y = (lines['encoding'] as Record<string, Record<string, unknown>>)['y']!;
  assert.ok(((y['scale'] as { padding: number }).padding ?? 0) > 0);
  assert.ok(nominal.data.some((r) => r['series'] === 'goodput' && r['value'] === 0));
});

test('run figures: the phases shaded and labelled, the drain (partial last second) dropped, no title drawn', async () => {
  // Seconds 12 and 13 are the drain after the schedule (no load offered; the last one partial).
  const text = csv(14).replace(/^(1[23]),observe,280,/gm, '$1,drain,0,');
  assert.match(text, /^13,drain,0,/m);
  const figs = runFigures(runData(1, text), '');
  for (const f of figs) {
    assert.equal(f.spec['title'], undefined, `${f.id}: a title drawn in the figure`);
    assert.ok(!f.data.some((r) => (r['t_s'] as number) >= 12), `${f.id}: the drain is drawn`);
    const bands = layers(f.spec)
      .filter((l) => markType(l) === 'rect')
      .flatMap(valuesOf)
      .filter((v) => 'phase' in v);
    // (each panel of a stacked figure shades them again)
    assert.deepEqual(
      [...new Set(bands.map((b) => `${String(b['phase'])} ${String(b['start'])}-${String(b['end'])}`))],
      ['baseline 0-4', 'trigger 4-6', 'observe 6-12'],
      `${f.id}: phases shaded`,
    );
  }
  const svg = (await renderSvg(figs[0]!.spec)).svg;
  for (const label of ['baseline', 'trigger', 'observation']) assert.ok(svgTexts(svg).includes(label), label);
  assert.equal(figs[0]!.spec['description'], 'Offered load, attempts and goodput');
});

test('latency: the seconds where every origin failed are shaded and said so; failures are a stacked area', async () => {
  const figs = runFigures(runData(1, csv(12)), '');
  const lat = figs.find((f) => f.id === 'latency')!;
  const failing = layers(lat.spec).find((l) => valuesOf(l)[0]?.['label'] === 'every origin failed')!;
  // csv(12): no success from second 4 on, 270 timeouts a second.
  assert.deepEqual(
    valuesOf(failing).map((v) => v['start']),
    [4, 5, 6, 7, 8, 9, 10, 11],
  );
  assert.match(lat.caption, /8 seconds shaded red/);
  assert.ok(svgTexts((await renderSvg(lat.spec)).svg).includes('every origin failed'));
  const fail = figs.find((f) => f.id === 'failures')!;
  const area = layers(fail.spec).find((l) => markType(l) === 'area')!;
  assert.equal((area['mark'] as Record<string, unknown>)['interpolate'], 'step-after');
  assert.equal((area['encoding'] as Record<string, Record<string, unknown>>)['y']!['stack'], 'zero');
  assert.ok(!layers(fail.spec).some((l) => markType(l) === 'bar'));
});

test('server: with api replicas, each replica beside the sum in every panel, labelled with what it counts', async () => {
  const half = (f: (i: number) => number) => (i: number) => (i >= 4 && i < 6 ? '' : f(i) / 2);
  const extra = {
    server_received: () => 1100,
    server_completed: () => 400,
    api0_queue_depth: half((i) => i * 100),
    api1_queue_depth: half((i) => i * 100),
    api0_busy_workers: half(() => 8),
    api1_busy_workers: half(() => 8),
    api0_received: () => 550,
    api1_received: () => 550,
    api0_completed: () => 200,
    api1_completed: () => 200,
  };
  const f = runFigures(runData(1, csv(12, extra)), '').find((x) => x.id === 'server')!;
  const nouns = ['queue depth', 'busy workers', 'received', 'completed'];
  assert.deepEqual(
    f.series,
    nouns.flatMap((n) => [`${n} (all replicas)`, `${n}, replica 0`, `${n}, replica 1`]),
  );
  assert.equal((f.spec['vconcat'] as unknown[]).length, 4);
  // Every row of the figure's CSV says which panel it belongs to.
  const rowAt = (series: string) => f.data.find((r) => r['t_s'] === 2 && r['series'] === series)?.['value'];
  assert.equal(rowAt('received, replica 1'), 550);
  assert.equal(rowAt('queue depth, replica 1'), 100);
  assert.equal(rowAt('queue depth (all replicas)'), 200);
  await assertSvg(f);
  assertUnits(f);
  // One api: the two panels, unlabelled by replica.
  const one = runFigures(runData(1, csv(12)), '').find((x) => x.id === 'server')!;
  assert.deepEqual(one.series, ['queue depth', 'busy workers']);
});
