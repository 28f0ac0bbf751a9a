import { parse as parseYaml } from 'yaml';
import type { Parsed } from './units.js';

/**
 * An override of one field of an experiment by its dotted path, from `--set path=value`
 * on the command line or from a sweep's factor. Overrides are applied to the file's data
 * before validation, so an overridden value is checked exactly like a written one.
 */
export interface Override {
  /** Path segments: object keys, or indices into arrays ("load.mix.0.share"). */
  readonly path: readonly string[];
  readonly value: unknown;
  /** Where it came from, to name it in errors and in manifest.json: "--set load.rate=40/s". */
  readonly source: string;
}

const SEGMENT = /^(?:[A-Za-z_][A-Za-z0-9_-]*|\d+)$/;

/** A dotted path such as client.retry.maxAttempts, or load.mix.0.share. */
export function parsePath(text: string): Parsed<string[]> {
  const segs = text.split('.');
  if (text === '' || !segs.every((s) => SEGMENT.test(s)))
    return {
      ok: false,
      message: `"${text}" is not a field path; write it like load.rate or client.retry.policy`,
    };
  return { ok: true, value: segs };
}

/**
 * `path=value`: the value is read as YAML, so `4` is a number, `none` and `40/s` are
 * strings, and `{ policy: none }` is a mapping (as it would be in the file).
 */
export function parseSet(text: string): Parsed<Override> {
  const eq = text.indexOf('=');
  if (eq <= 0) return { ok: false, message: `"${text}" is not path=value (e.g. load.rate=40/s)` };
  const path = parsePath(text.slice(0, eq).trim());
  if (!path.ok) return path;
  const raw = text.slice(eq + 1);
  let value: unknown;
  try {
    // Small and alias-free by construction: a command-line value cannot be a YAML bomb.
    value = parseYaml(raw, { maxAliasCount: 0 });
  } catch (err) {
    return {
      ok: false,
      message: `the value of "${text}" is not valid YAML: ${(err as Error).message.split('\n')[0]}`,
    };
  }
  return { ok: true, value: { path: path.value, value: value ?? null, source: `--set ${text}` } };
}

/**
 * Applies overrides in order to a copy of `data` (the parsed file), creating the
 * mappings a path needs. An index into an array replaces that element.
 */
export function applyOverrides(
  data: Record<string, unknown>,
  overrides: readonly Override[],
): Record<string, unknown> {
  const root = structuredClone(data);
  for (const o of overrides) {
    let node: Record<string, unknown> | unknown[] = root;
    o.path.forEach((seg, i) => {
      const last = i === o.path.length - 1;
      const key: string | number = Array.isArray(node) && /^\d+$/.test(seg) ? Number(seg) : seg;
      const container = node as Record<string | number, unknown>;
      if (last) {
        container[key] = structuredClone(o.value);
        return;
      }
      const next = container[key];
      if (next === null || typeof next !== 'object') container[key] = {};
      node = container[key] as Record<string, unknown> | unknown[];
    });
  }
  return root;
}

/**
 * How an issue at `path` relates to the overrides: "from" when an override wrote that
 * field or a parent of it (the value is the override's), "with" when an override wrote
 * inside it (the file's field, changed by the override).
 */
export function overrideAt(
  path: readonly PropertyKey[],
  overrides: readonly Override[],
): { override: Override; relation: 'from' | 'with' } | undefined {
  const p = path.map(String);
  for (let k = overrides.length - 1; k >= 0; k--) {
    const o = overrides[k]!;
    const n = Math.min(p.length, o.path.length);
    if (!p.slice(0, n).every((s, i) => s === o.path[i])) continue;
    return { override: o, relation: o.path.length <= p.length ? 'from' : 'with' };
  }
  return undefined;
}
