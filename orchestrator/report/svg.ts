import type * as vega from 'vega';
import type { TopLevelSpec } from 'vega-lite';

type VegaLibs = { vega: typeof import('vega'); compile: typeof import('vega-lite').compile };
let libs: Promise<VegaLibs> | undefined;

/**
 * Vega and Vega-Lite, imported on first use: together they take about half a second to
 * load, which every command paid when they were imported up front (figures or not).
 */
export function loadVega(): Promise<VegaLibs> {
  libs ??= Promise.all([
    import('vega'),
    import('vega-lite'),
    // Text measured in the figures' font (vega's guess without a canvas is twice as wide).
    import('./textWidth.js').then((m) => m.installTextWidth()),
  ]).then(([v, vl]) => ({ vega: v, compile: vl.compile }));
  return libs;
}

/** A Vega-Lite spec as plain JSON (data inline). */
export type VlSpec = Record<string, unknown>;

/**
 * Collects what Vega-Lite and Vega would log, so a figure that compiles with warnings is
 * visible. Arrow functions, not methods: Vega calls them with `this` bound to its View.
 */
class CollectingLogger implements vega.LoggerInterface {
  constructor(
    private readonly into: string[],
    private lvl: number,
  ) {}

  readonly level = (l?: number): number | this => {
    if (l === undefined) return this.lvl;
    this.lvl = l;
    return this;
  };

  readonly error = (...a: readonly unknown[]): this => {
    this.into.push(`error: ${a.map(String).join(' ')}`);
    return this;
  };

  readonly warn = (...a: readonly unknown[]): this => {
    this.into.push(`warn: ${a.map(String).join(' ')}`);
    return this;
  };

  readonly info = (): this => this;

  readonly debug = (): this => this;
}

/** What makes a Vega-Lite spec a view: a mark, or a composition of views. */
const VIEW_KEYS = ['mark', 'layer', 'concat', 'hconcat', 'vconcat', 'facet', 'repeat'] as const;

/** The figures build their specs as plain JSON; one that has a view is what compile() takes. */
function isTopLevelSpec(spec: VlSpec): spec is VlSpec & TopLevelSpec {
  return VIEW_KEYS.some((k) => k in spec);
}

/** Vega-Lite → Vega, throwing on errors; warnings are returned. */
export async function compileSpec(spec: VlSpec): Promise<{ vega: vega.Spec; warnings: string[] }> {
  const warnings: string[] = [];
  if (!isTopLevelSpec(spec)) throw new Error(`not a Vega-Lite view: it has none of ${VIEW_KEYS.join(', ')}`);
  const { vega, compile } = await loadVega();
  const out = compile(spec, { logger: new CollectingLogger(warnings, vega.Warn) });
  return { vega: out.spec as vega.Spec, warnings };
}

/**
 * Renders a Vega-Lite spec to an SVG document in Node, without a browser or canvas
 * (vega's headless view; text widths are estimated, so the output is the same on
 * every machine).
 */
export function renderSvg(spec: VlSpec): Promise<{ svg: string; warnings: string[] }> {
  // A figure's print (pdf.ts) starts from the spec its SVG was just drawn from: drawn once.
  const key = JSON.stringify(spec);
  if (last?.key !== key) {
    const drawn = rendering.then(() => renderAlone(spec));
    rendering = drawn.catch(() => undefined);
    last = { key, drawn };
  }
  return last.drawn.then(({ svg, warnings }) => ({ svg, warnings: [...warnings] }));
}

/**
 * The last spec drawn (as JSON, what the SVG depends on) and its drawing. A render is a
 * function of the spec's JSON alone (ids numbered from 1 each time, text measured in one
 * font), so the same JSON again is the same SVG.
 */
let last: { key: string; drawn: Promise<{ svg: string; warnings: string[] }> } | undefined;

/**
 * One render at a time, each numbering its clip paths and gradients from 1: vega counts them
 * per process, so a figure's SVG depended on how many figures the process had drawn before
 * it (a sweep's points drawn in one process or in several differed in their ids only).
 */
let rendering: Promise<unknown> = Promise.resolve();

async function renderAlone(spec: VlSpec): Promise<{ svg: string; warnings: string[] }> {
  const { vega } = await loadVega();
  vega.resetSVGDefIds();
  const { vega: vg, warnings } = await compileSized(spec);
  const view = new vega.View(vega.parse(withoutTooltips(vg)), {
    renderer: 'none',
    logger: new CollectingLogger(warnings, vega.Warn),
    logLevel: vega.Warn,
  });
  try {
    const svg = await view.toSVG();
    return { svg: `<?xml version="1.0" encoding="UTF-8"?>\n${svg}\n`, warnings };
  } finally {
    view.finalize();
  }
}

/**
 * Placeholders of a figure's widths (config.view.continuousWidth and a single view's own
 * width): numbers no figure holds, so each one in the compiled spec is where its width went.
 */
const PLOT_WIDTH = 1_000_000.123456789;
const VIEW_WIDTH = 2_000_000.123456789;
const PLACEHOLDER_TEXT = '.123456789';

/** The last spec compiled with its widths as placeholders (its JSON), and Vega-Lite's output. */
let sized: { key: string; vega: vega.Spec } | undefined;

/**
 * compileSpec(staticSpec(spec)), compiled once for every width: a figure's print (pdf.ts)
 * is the same spec at other widths, two or three of them. Vega-Lite passes a view's width
 * through to its output as is (the value of the width signal; layoutsize/assemble.ts), so
 * the output with each placeholder replaced by its width is the output at that width. A
 * spec whose compilation warns (a warning may name a width), or whose output has a
 * placeholder inside a string (an expression), is compiled as it is.
 */
export async function compileSized(spec: VlSpec): Promise<{ vega: vega.Spec; warnings: string[] }> {
  const config = spec['config'] as { view?: { continuousWidth?: unknown } } | undefined;
  const viewWidth = config?.view?.continuousWidth;
  const plotWidth = spec['width'];
  if (typeof viewWidth !== 'number') return compileSpec(staticSpec(spec) as VlSpec);
  const widths = new Map([[VIEW_WIDTH, viewWidth]]);
  if (typeof plotWidth === 'number') widths.set(PLOT_WIDTH, plotWidth);
  const placed: VlSpec = {
    ...spec,
    ...(typeof plotWidth === 'number' ? { width: PLOT_WIDTH } : {}),
    config: { ...config, view: { ...config?.view, continuousWidth: VIEW_WIDTH } },
  };
  const key = JSON.stringify(placed);
  if (sized?.key !== key) {
    sized = undefined;
    if (key.split(PLACEHOLDER_TEXT).length !== widths.size + 1)
      return compileSpec(staticSpec(spec) as VlSpec);
    const out = await compileSpec(staticSpec(placed) as VlSpec);
    if (out.warnings.length > 0) return compileSpec(staticSpec(spec) as VlSpec);
    sized = { key, vega: out.vega };
  }
  const vg = withWidths(sized.vega, widths);
  if (vg === undefined) {
    sized = undefined;
    return compileSpec(staticSpec(spec) as VlSpec);
  }
  return { vega: vg, warnings: [] };
}

/** A copy of `x` with each placeholder number replaced by its width; undefined if a string holds one. */
function withWidths(x: unknown, widths: ReadonlyMap<number, number>): vega.Spec | undefined {
  let inString = false;
  const copy = (v: unknown): unknown => {
    if (typeof v === 'number') return widths.get(v) ?? v;
    if (typeof v === 'string') {
      if (v.includes(PLACEHOLDER_TEXT)) inString = true;
      return v;
    }
    if (Array.isArray(v)) return v.map(copy);
    if (v === null || typeof v !== 'object') return v;
    const out: Record<string, unknown> = {};
    for (const [k, e] of Object.entries(v)) out[k] = copy(e);
    return out;
  };
  const out = copy(x) as vega.Spec;
  return inString ? undefined : out;
}

/**
 * The Vega spec without its marks' tooltips: a tooltip is shown by a browser's pointer and
 * never drawn in an SVG, and each one formats every point's numbers (a 610 s run's figure
 * has thousands). The spec is vega-lite's fresh output, changed in place.
 */
function withoutTooltips(spec: vega.Spec): vega.Spec {
  const visit = (marks: readonly vega.Mark[] | undefined): void => {
    for (const m of marks ?? []) {
      for (const set of Object.values(m.encode ?? {})) if (set) delete set.tooltip;
      if (m.type === 'group') visit(m.marks);
    }
  };
  visit(spec.marks);
  return spec;
}

/** The spec without its interactive parameters (zoom/pan bind to browser events a static SVG has no use for). */
export function staticSpec(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(staticSpec);
  if (x === null || typeof x !== 'object') return x;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) if (k !== 'params') out[k] = staticSpec(v);
  return out;
}
