import type { Manifest } from './load.js';

/** One field in which two runs' setups differ: its dotted path and each side's value as shown. */
export interface Difference {
  readonly path: string;
  /** null: the field is absent on that side. */
  readonly a: string | null;
  readonly b: string | null;
}

/** Fields that name or describe a run rather than set it up. */
// (repeat: how many runs, shown in the comparison's repetitions row, not how a run was set up.)
const IGNORED = new Set(['name', 'description', 'repeat', 'schedule.writtenAs']);
const MAX_VALUE = 40;

/** The manifest's overrides (`--set` and sweep factors), as written: path → value. */
function overridesOf(m: Manifest): Map<string, string> {
  const list = (m as Manifest & { overrides?: unknown }).overrides;
  const out = new Map<string, string>();
  if (!Array.isArray(list)) return out;
  for (const o of list) {
    if (typeof o !== 'string') continue;
    const i = o.indexOf('=');
    if (i <= 0) continue;
    let v = o.slice(i + 1);
    // Sweep points record a factor's value as JSON ("20% capacity" quoted).
    try {
      const parsed: unknown = JSON.parse(v);
      if (typeof parsed === 'string') v = parsed;
    } catch {
      // written as is
    }
    out.set(o.slice(0, i).trim(), v);
  }
  return out;
}

function show(v: unknown): string {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE - 1)}…` : s;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/**
 * The fields in which two runs' setups differ: the resolved experiments (every field,
 * defaults included) compared leaf by leaf, and the runtime and scale of the manifests.
 * A field that a `--set` or a sweep factor changed is shown as written there ("2s", not
 * 2000); anything else as the resolved experiment holds it.
 */
export function differences(ma: Manifest, mb: Manifest): Difference[] {
  const oa = overridesOf(ma);
  const ob = overridesOf(mb);
  const out: Difference[] = [];
  const walk = (a: unknown, b: unknown, path: string[]): void => {
    const p = path.join('.');
    if (IGNORED.has(p)) return;
    // A field set by an override is compared whole, and named as the override wrote it.
    if (isObject(a) && isObject(b) && !oa.has(p) && !ob.has(p)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], [...path, k]);
      return;
    }
    if (JSON.stringify(a) === JSON.stringify(b)) return;
    out.push({
      path: p,
      a: a === undefined ? null : (oa.get(p) ?? show(a)),
      b: b === undefined ? null : (ob.get(p) ?? show(b)),
    });
  };
  walk(ma.experiment, mb.experiment, []);
  if (ma.runtime !== mb.runtime) out.push({ path: 'runtime', a: ma.runtime, b: mb.runtime });
  if (ma.scale !== mb.scale) out.push({ path: 'scale', a: String(ma.scale), b: String(mb.scale) });
  return out;
}

const MAX_SHOWN = 3;

/**
 * Each side's name for a comparison's legends: the fields it differs in, with its values
 * ("client.retry.maxAttempts=4" against "client.retry.maxAttempts=1"); the first three,
 * then how many more. Null when the setups are the same (the folders tell them apart).
 */
export function sideNames(diffs: readonly Difference[]): [string, string] | null {
  if (diffs.length === 0) return null;
  const shown = diffs.slice(0, MAX_SHOWN);
  const more = diffs.length > MAX_SHOWN ? ` (+${diffs.length - MAX_SHOWN} more)` : '';
  const side = (pick: (d: Difference) => string | null): string => {
    const parts = shown.map((d) => [d.path, pick(d)] as const).filter(([, v]) => v !== null);
    return parts.length ? parts.map(([p, v]) => `${p}=${v}`).join(', ') + more : `without ${shown[0]!.path}`;
  };
  return [side((d) => d.a), side((d) => d.b)];
}
