import { test } from 'node:test';
import assert from 'node:assert/strict';
import type * as Vega from 'vega';
import { results, runData, summary } from '../../../test/helpers/reportData.js';
import { compareSections, compareSides } from '../compare.js';
import { PDF_TEXT_PT, PDF_WIDTHS, printFigure, printSpec, svgSize, svgToPdf, type PdfWidth } from '../pdf.js';
import { compileSpec, renderSvg, staticSpec, type VlSpec } from '../svg.js';
import type { StepTable, SweepTable } from '../tables.js';
import { PRINT_CONFIG } from '../theme.js';
import { vegaTextWidth } from '../textWidth.js';
import { reportFigures } from '../writeReport.js';
import type { Figure } from './common.js';
import { runFigures } from './run.js';
import { stepFigures } from './step.js';
import { ctmcFigure, type CtmcModel } from '../../model/ctmc.js';
import type { BistableRange } from '../../model/fluid.js';
import { sweepFigures } from './sweep.js';

/**
 * Print layout of every figure kind (issue 33, point 3), at one column and at the text
 * width: each figure is laid out by vega as the PDF draws it, and the test reads the
 * geometry from vega's scenegraph, each text's box measured again in the font the PDF
 * embeds (so a layout vega made on a wrong guess of text widths shows as what prints).
 */

// --- Figures of every kind, from data shaped like a retry-storm run -------------------------

/** A run's timeseries.csv: warm-up 0–29 s, baseline 30–89, trigger 90–99, observation 100–279. */
function stormCsv(extra: Record<string, (i: number) => number | string> = {}): string {
  const cols = [
    't_s',
    'phase',
    'offered',
    'attempts',
    'goodput',
    'amplification_client',
    'amplification_server',
    'failed_timeout',
    'response_p50_ms',
    'response_p99_ms',
    'response_max_ms',
    'server_queue_depth',
    'server_busy_workers',
    'server_cpu_seconds',
    'server_rss_bytes',
    ...Object.keys(extra),
  ];
  // Deterministic noise: the same figure every run.
  const noise = (i: number, k: number): number => Math.round(Math.sin(i * 12.9898 + k * 78.233) * 10);
  const rows = [cols.join(',')];
  for (let i = 0; i < 280; i++) {
    const phase = i < 30 ? 'warmup' : i < 90 ? 'baseline' : i < 100 ? 'trigger' : 'observe';
    const calm = i < 90;
    const paused = phase === 'trigger';
    rows.push(
      [
        i,
        phase,
        280 + noise(i, 1),
        calm ? 280 + noise(i, 2) : 1100 + 5 * noise(i, 3),
        calm ? 279 + noise(i, 4) : 0,
        calm ? 1 : 3.9,
        paused ? '' : calm ? 1 : 3.2,
        calm ? 0 : 270,
        calm ? 20 + noise(i, 5) : '',
        calm ? 100 + noise(i, 6) : '',
        calm ? 150 + noise(i, 7) : '',
        paused ? '' : calm ? 2 : 400,
        paused ? '' : calm ? 6 : 8,
        paused ? '' : 0.4,
        paused ? '' : 7e7,
        ...Object.values(extra).map((f) => f(i)),
      ].join(','),
    );
  }
  return rows.join('\n') + '\n';
}

const storm = { trigger: { kind: 'pause', target: 'api', startS: 90, endS: 100 }, recoveryDeadlineS: 50 };
const stormRun = (index = 1, extra = {}, over = {}) =>
  runData(index, stormCsv(extra), { ...storm, ...over } as Parameters<typeof runData>[2]);

const optional = {
  rejected_queue_full: (i: number) => (i > 95 ? 30 : 0),
  cache_hits: (i: number) => (i < 90 ? 900 : 100),
  cache_misses: (i: number) => (i < 90 ? 100 : 900),
  db_pool_waiting: (i: number) => (i < 90 ? 0 : 12),
  breaker_state: (i: number) => (i < 95 ? 'closed' : i < 150 ? 'open' : 'half-open'),
  proc_api_cpu: () => 0.6,
  proc_api_rss_bytes: () => 8e7,
  // The JVM reference server's GC (the gc figure): seconds per bucket, collections, heap bytes.
  gc_seconds: (i: number) => (i < 90 ? 0.03 : 0.65) + ((i * 7) % 10) / 100,
  gc_collections: (i: number) => (i < 90 ? 3 : 45) + ((i * 3) % 5),
  heap_used_bytes: (i: number) => (i < 90 ? 34 : 63) * 2 ** 20 + ((i * 5) % 7) * 2 ** 18,
};

const integerSweep: SweepTable = {
  design: 'one-at-a-time',
  factors: [{ name: 'maxAttempts', unit: 'attempts', reference: 4 }],
  figures: [
    { name: 'amplification', unit: 'attempts per origin' },
    { name: 'recovery time', unit: 's' },
  ],
  rows: [1, 2, 3, 4, 5].map((n) => ({
    varied: 'maxAttempts',
    factors: { maxAttempts: n },
    figures: { amplification: n * 0.9, 'recovery time': n < 3 ? 4 + n : 30 },
    verdict: n < 3 ? ('recovered' as const) : ('metastable' as const),
  })),
};

const factorial: SweepTable = {
  name: 'retries-x-shed',
  design: 'grid',
  factors: [
    { name: 'client.retry.maxAttempts', unit: 'value' },
    { name: 'shed', unit: 'as written' },
  ],
  figures: [{ name: 'goodput after', unit: 'req/s' }],
  rows: (
    [
      [1, 'off', [10, 12]],
      [1, 'on', [14, 16]],
      [2, 'off', [16, 18]],
      [2, 'on', [24, 26]],
      [4, 'off', [20, 22]],
      [4, 'on', [40, 42]],
    ] as const
  ).map(([a, b, ys]) => ({
    factors: { 'client.retry.maxAttempts': a, shed: b },
    figures: { 'goodput after': (ys[0] + ys[1]) / 2 },
    perRun: { 'goodput after': [...ys] },
    verdict: 'recovered' as const,
  })),
};

const map: SweepTable = {
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

const steps: StepTable = {
  steps: [100, 200, 300, 400, 500].map((o) => ({
    offeredPerS: o,
    goodputPerS: Math.min(o, 380),
    latencyMs: { samples: o * 30, p50: o < 400 ? 20 : 300, p99: o < 400 ? 80 : 2000 },
  })),
  saturation: { offeredPerS: 400, goodputPerS: 380 },
};

function compareFigures(): Figure[] {
  const a = results([stormRun(1)]);
  const bRun = stormRun(1);
  const b = results([
    {
      ...bRun,
      manifest: {
        ...bRun.manifest,
        experiment: {
          ...bRun.manifest.experiment,
          client: {
            ...bRun.manifest.experiment.client,
            retry: { ...bRun.manifest.experiment.client.retry, maxAttempts: 1 },
          },
        },
      },
    },
  ]);
  const [sa, sb] = compareSides(
    { folder: 'retry-storm', data: a },
    { folder: 'retry-storm-no-retry', data: b },
  );
  return compareSections(sa, sb).flatMap((s) => s.figures);
}

/** `metabench model`'s CTMC curve: recovery time spans seconds to 10^9 s over the bistable range. */
const ctmcPoints = [100, 150, 200, 250, 300, 350, 400, 450].map((offeredPerS, i) => ({
  offeredPerS,
  recoveryS: i < 2 ? 0.4 + i : 10 ** (i + 1),
  collapseS: i < 6 ? 10 ** (12 - i) : 5 - i / 2,
}));
const ctmc = { points: ctmcPoints } as unknown as CtmcModel;
const bistable = {
  bistable: true,
  capacityPerS: 400,
  lowerPerS: 200,
  upperPerS: 420,
} as unknown as BistableRange;

/** Every figure kind the report draws, and which of them have an integer-valued factor on x. */
function everyFigure(): { figure: Figure; integerX: boolean }[] {
  const recovered = { recovered: true, recoveryTimeS: 7.5, metastable: false, outcome: 'recovered' };
  const calibrated = { capacity: { ...summary().capacity, measuredPerS: 371.5 } };
  const all: { figure: Figure; integerX: boolean }[] = [];
  const add = (figs: readonly Figure[], integerX = false, tag = ''): void => {
    for (const f of figs) all.push({ figure: tag ? { ...f, id: `${f.id} (${tag})` } : f, integerX });
  };
  add(runFigures(stormRun(), ''));
  add(runFigures(stormRun(1, optional, calibrated), ''), false, 'optional series, calibrated');
  add(runFigures(stormRun(1, {}, recovered), '').slice(0, 1), false, 'recovered');
  add(reportFigures(results([stormRun(1), stormRun(2)])).runs.filter((f) => f.id.startsWith('runs-')));
  add(stepFigures(steps));
  add(sweepFigures(integerSweep), true);
  const [mapFig, ...gridFigs] = sweepFigures(map);
  add([mapFig!]);
  add(gridFigs, true, 'grid');
  const fact = sweepFigures(factorial);
  add(
    fact.filter((f) => f.id.startsWith('sweep-interaction')),
    true,
  );
  add(fact.filter((f) => f.id.startsWith('sweep-main')));
  add(compareFigures());
  add([ctmcFigure(ctmc, bistable)]);
  return all;
}

// --- The scenegraph: every item's box, texts measured in the printed font ---------------------

interface Box {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
}
interface TextBox extends Box {
  readonly text: string;
  readonly role: string;
}
interface Layout {
  /** The SVG's size (px) and where the scenegraph's origin sits in it. */
  readonly width: number;
  readonly height: number;
  readonly texts: TextBox[];
  /** Rules drawn as marks (capacity, markers, references, error bars), as segments. */
  readonly rules: [number, number, number, number][];
  /** Data lines: each a polyline, gaps split. */
  readonly lines: [number, number][][];
  /** Point symbols, each with the plot frame it belongs to. */
  readonly symbols: { box: Box; frame: Box }[];
  /** The axis domain lines: their union is the data rectangle. */
  readonly domains: Box[];
  /** The union of every item's box (texts as printed). */
  readonly drawn: Box;
  /** The x axis labels (bottom orient). */
  readonly xLabels: string[];
}

const union = (bs: readonly Box[]): Box => ({
  x1: Math.min(...bs.map((b) => b.x1)),
  y1: Math.min(...bs.map((b) => b.y1)),
  x2: Math.max(...bs.map((b) => b.x2)),
  y2: Math.max(...bs.map((b) => b.y2)),
});

/** What vega exports beyond its typings: its text metrics and bound functions (vega-scenegraph's). */
interface SceneFunctions {
  readonly textMetrics: { width: (item: object, text: unknown) => number };
  readonly boundItem: (item: object) => void;
}

/** Lays `spec` out as the SVG renderer does and reads the geometry back, in SVG px. */
async function layout(spec: VlSpec): Promise<Layout> {
  const { svg } = await renderSvg(spec); // also loads vega as the report sets it up
  const vega = (await import('vega')) as unknown as typeof Vega & SceneFunctions;
  const { vega: vg } = await compileSpec(staticSpec(spec) as VlSpec);
  const view = new vega.View(vega.parse(vg), { renderer: 'none', logLevel: vega.Error });
  await view.runAsync();
  // The SVG draws the scenegraph at the view's origin, inside its padding.
  const pad = view.padding() as { left: number; top: number };
  const ox = view.origin()[0] + pad.left;
  const oy = view.origin()[1] + pad.top;
  const out: Layout = {
    ...svgSize(svg),
    texts: [],
    rules: [],
    lines: [],
    symbols: [],
    domains: [],
    drawn: { x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity },
    xLabels: [],
  };
  const boxes: Box[] = [];
  const laidOut = vega.textMetrics.width;
  vega.textMetrics.width = vegaTextWidth;
  type Item = Vega.Item & Record<string, unknown> & { bounds: Vega.Bounds; items?: Mark[] };
  type Mark = { marktype: string; role: string; items: Item[] };
  const shift = (b: Vega.Bounds, dx: number, dy: number): Box => ({
    x1: b.x1 + dx,
    y1: b.y1 + dy,
    x2: b.x2 + dx,
    y2: b.y2 + dy,
  });
  const walk = (mark: Mark, dx: number, dy: number, frame: Box | null): void => {
    if (mark.marktype === 'line' && mark.role === 'mark') {
      let run: [number, number][] = [];
      for (const it of mark.items) {
        if (it['defined'] === false || !Number.isFinite(it['y'])) {
          if (run.length > 1) out.lines.push(run);
          run = [];
        } else run.push([(it['x'] as number) + dx, (it['y'] as number) + dy]);
      }
      if (run.length > 1) out.lines.push(run);
    }
    for (const it of mark.items) {
      // Hidden (an axis label dropped for overlapping its neighbour): not drawn.
      if (it['opacity'] === 0) continue;
      if (mark.marktype === 'group') {
        const x = dx + ((it['x'] as number) ?? 0);
        const y = dy + ((it['y'] as number) ?? 0);
        const w = (it['width'] as number) ?? 0;
        const h = (it['height'] as number) ?? 0;
        const own = (mark.role === 'frame' || mark.role === 'scope') && w > 0 && h > 0;
        for (const m of it.items ?? []) walk(m, x, y, own ? { x1: x, y1: y, x2: x + w, y2: y + h } : frame);
        continue;
      }
      if (mark.marktype === 'text') {
        const text = [it['text']].flat().join(' ').trim();
        if (text === '') continue;
        // The box of the text as printed: vega's own bound function, with the font's real widths.
        const kept = it.bounds;
        it.bounds = new vega.Bounds();
        vega.boundItem(it);
        const b = shift(it.bounds, dx, dy);
        it.bounds = kept;
        out.texts.push({ ...b, text, role: mark.role });
        boxes.push(b);
        if (mark.role === 'axis-label' && it['baseline'] === 'top' && !it['angle']) out.xLabels.push(text);
        continue;
      }
      const b = shift(it.bounds, dx, dy);
      if (Number.isFinite(b.x1)) boxes.push(b);
      if (mark.marktype === 'rule' && mark.role === 'axis-domain') out.domains.push(b);
      if (mark.marktype === 'rule' && mark.role === 'mark') {
        const x = (it['x'] as number) ?? 0;
        const y = (it['y'] as number) ?? 0;
        out.rules.push([x + dx, y + dy, ((it['x2'] as number) ?? x) + dx, ((it['y2'] as number) ?? y) + dy]);
      }
      if (mark.marktype === 'symbol' && mark.role === 'mark' && frame) out.symbols.push({ box: b, frame });
    }
  };
  try {
    walk((view.scenegraph() as unknown as { root: Mark }).root, ox, oy, null);
  } finally {
    vega.textMetrics.width = laidOut;
    view.finalize();
  }
  return { ...out, drawn: union(boxes) };
}

// --- The checks ---------------------------------------------------------------------------------

const overlap = (a: Box, b: Box, slack = 0.5): boolean =>
  Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1) > slack && Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1) > slack;

/** Whether the segment crosses the box (shrunk by half a pixel: a line touching a label's edge is fine). */
function crosses(b: Box, [x1, y1, x2, y2]: readonly [number, number, number, number]): boolean {
  const bx1 = b.x1 + 0.5;
  const by1 = b.y1 + 0.5;
  const bx2 = b.x2 - 0.5;
  const by2 = b.y2 - 0.5;
  // Liang–Barsky clipping: the part of the segment inside the box, if any.
  let t0 = 0;
  let t1 = 1;
  const dx = x2 - x1;
  const dy = y2 - y1;
  for (const [p, q] of [
    [-dx, x1 - bx1],
    [dx, bx2 - x1],
    [-dy, y1 - by1],
    [dy, by2 - y1],
  ] as const) {
    if (p === 0) {
      if (q < 0) return false;
    } else {
      const r = q / p;
      if (p < 0) t0 = Math.max(t0, r);
      else t1 = Math.min(t1, r);
      if (t0 > t1) return false;
    }
  }
  return true;
}

const PX_PER_PT = PRINT_CONFIG.axis.labelFontSize / 8;
const targetPx = (w: PdfWidth): number => (PDF_WIDTHS[w] / 2.54) * 72 * PX_PER_PT;

function problems(l: Layout, widthPx: number, integerX: boolean): string[] {
  const out: string[] = [];
  const pad = PRINT_CONFIG.padding;
  // The figure as wide as asked.
  if (Math.abs(l.width - widthPx) > Math.max(4, widthPx * 0.02))
    out.push(`${l.width} px wide, asked ${Math.round(widthPx)}`);
  // Nothing blank around the drawing: each margin is the padding (a few px of rounding).
  const margins = {
    top: l.drawn.y1,
    left: l.drawn.x1,
    right: l.width - l.drawn.x2,
    bottom: l.height - l.drawn.y2,
  };
  for (const [side, m] of Object.entries(margins))
    if (m > pad + 4) out.push(`${Math.round(m)} px blank at the ${side} (padding ${pad})`);
  // The data rectangle takes most of the width.
  const data = union(l.domains);
  if (data.x2 - data.x1 < 0.6 * l.width)
    out.push(`the plot is ${Math.round(data.x2 - data.x1)} px of ${l.width} px wide`);
  // No label over another.
  for (let i = 0; i < l.texts.length; i++)
    for (let j = i + 1; j < l.texts.length; j++)
      if (overlap(l.texts[i]!, l.texts[j]!)) out.push(`"${l.texts[i]!.text}" overlaps "${l.texts[j]!.text}"`);
  // No rule or data line through a label.
  for (const t of l.texts) {
    const rule = l.rules.find((r) => crosses(t, r));
    if (rule) out.push(`a rule crosses "${t.text}"`);
    const line = l.lines.find((pts) => pts.some((p, k) => k > 0 && crosses(t, [...pts[k - 1]!, ...p])));
    if (line) out.push(`a line crosses "${t.text}"`);
  }
  // Points whole, inside their plot.
  for (const s of l.symbols)
    if (
      s.box.x1 < s.frame.x1 - 0.5 ||
      s.box.x2 > s.frame.x2 + 0.5 ||
      s.box.y1 < s.frame.y1 - 0.5 ||
      s.box.y2 > s.frame.y2 + 0.5
    )
      out.push(`a point at the plot's edge is cut (${Math.round(s.box.x1)}–${Math.round(s.box.x2)} px)`);
  if (integerX) {
    const bad = l.xLabels.filter((t) => !/^-?\d[\d,]*$/.test(t));
    if (bad.length > 0 || l.xLabels.length === 0)
      out.push(`an integer factor with tick labels ${JSON.stringify(l.xLabels)}`);
  }
  return [...new Set(out)];
}

for (const width of ['column', 'text'] as const)
  test(`print layout at the ${width} width: every figure fills its frame, no label over a label or a line, integer factors with integer ticks, no point cut`, async () => {
    const failures: string[] = [];
    for (const { figure, integerX } of everyFigure()) {
      const l = await layout(await printSpec(figure.spec, width));
      for (const p of problems(l, targetPx(width), integerX)) failures.push(`${figure.id}: ${p}`);
    }
    assert.deepEqual(failures, []);
  });

interface PdfText {
  readonly str: string;
  readonly transform: readonly number[];
}

test('the PDF page is the width asked, the whole drawing scaled onto it, its text at the print size', async () => {
  const pdfjs = await import('pdfjs-dist/legacy/build/pdf.mjs');
  const figs = everyFigure()
    .map((f) => f.figure)
    .filter((f) =>
      [
        'throughput',
        'sweep-maxattempts',
        'compare-goodput',
        'sweep-map',
        'sweep-main-goodput-after',
      ].includes(f.id),
    );
  assert.equal(figs.length, 5);
  const failures: string[] = [];
  for (const width of ['column', 'text'] as const)
    for (const f of figs) {
      const { svg } = await printFigure(f.spec, width);
      const pdf = await svgToPdf(svg, PDF_WIDTHS[width], f.title);
      const doc = await pdfjs.getDocument({ data: new Uint8Array(pdf), disableFontFace: true, verbosity: 0 })
        .promise;
      const page = await doc.getPage(1);
      const [x0, y0, x1, y1] = page.view as [number, number, number, number];
      const w = x1 - x0;
      const h = y1 - y0;
      if (Math.abs(w - (PDF_WIDTHS[width] / 2.54) * 72) > 0.01)
        failures.push(`${f.id} ${width}: page ${w} pt wide`);
      // The page has the SVG's aspect: its viewBox drawn onto the whole page, none of it blank.
      const size = svgSize(svg);
      if (Math.abs(h / w - size.height / size.width) > 0.005)
        failures.push(
          `${f.id} ${width}: page ${Math.round(w)}×${Math.round(h)} pt, SVG ${size.width}×${size.height} px`,
        );
      // And that SVG was laid out at the page's width: its tick labels print at PDF_TEXT_PT.
      const items = (await page.getTextContent()).items.filter(
        (i): i is PdfText & typeof i => 'str' in i && /^[\d,.]+$/.test(i.str),
      );
      const sizes = items.map((i) => Math.hypot(i.transform[0]!, i.transform[1]!));
      if (sizes.length === 0 || sizes.some((pt) => Math.abs(pt - PDF_TEXT_PT) > 0.6))
        failures.push(
          `${f.id} ${width}: tick labels at ${[...new Set(sizes.map((pt) => pt.toFixed(1)))].join(', ')} pt`,
        );
    }
  assert.deepEqual(failures, []);
});

test('the figures laid out include the optional run figures, the JVM gc figure among them', () => {
  const ids = everyFigure().map((f) => f.figure.id);
  for (const id of ['rejections', 'cache', 'db', 'breaker', 'processes', 'gc'])
    assert.ok(
      ids.some((x) => x.split(' ')[0] === id),
      `${id} not laid out: ${ids.join(', ')}`,
    );
});
