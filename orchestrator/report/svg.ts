import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/** A Vega-Lite spec as plain JSON (data inline). */
export type VlSpec = Record<string, unknown>;

/** Collects what Vega-Lite and Vega would log, so a figure that compiles with warnings is visible. */
function collectingLogger(into: string[]) {
  let lvl = vega.Warn;
  const logger = {
    level(l?: number) {
      if (l === undefined) return lvl;
      lvl = l;
      return logger;
    },
    error(...a: readonly unknown[]) {
      into.push(`error: ${a.map(String).join(' ')}`);
      return logger;
    },
    warn(...a: readonly unknown[]) {
      into.push(`warn: ${a.map(String).join(' ')}`);
      return logger;
    },
    info() {
      return logger;
    },
    debug() {
      return logger;
    },
  };
  return logger;
}

/** Vega-Lite → Vega, throwing on errors; warnings are returned. */
export function compileSpec(spec: VlSpec): { vega: vega.Spec; warnings: string[] } {
  const warnings: string[] = [];
  const out = compile(spec as unknown as TopLevelSpec, { logger: collectingLogger(warnings) });
  return { vega: out.spec as vega.Spec, warnings };
}

/**
 * Renders a Vega-Lite spec to an SVG document in Node, without a browser or canvas
 * (vega's headless view; text widths are estimated, so the output is the same on
 * every machine).
 */
export async function renderSvg(spec: VlSpec): Promise<{ svg: string; warnings: string[] }> {
  const { vega: vg, warnings } = compileSpec(staticSpec(spec) as VlSpec);
  const view = new vega.View(vega.parse(vg), {
    renderer: 'none',
    logger: collectingLogger(warnings) as unknown as vega.LoggerInterface,
    logLevel: vega.Warn,
  });
  try {
    const svg = await view.toSVG();
    return { svg: `<?xml version="1.0" encoding="UTF-8"?>\n${svg}\n`, warnings };
  } finally {
    view.finalize();
  }
}

/** The spec without its interactive parameters (zoom/pan bind to browser events a static SVG has no use for). */
export function staticSpec(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(staticSpec);
  if (x === null || typeof x !== 'object') return x;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(x)) if (k !== 'params') out[k] = staticSpec(v);
  return out;
}
