import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, isAbsolute } from 'node:path';
import { LineCounter, parseDocument, isMap, isNode, type Document } from 'yaml';
import type { z } from 'zod';
import { SpecError, type SpecIssue } from './errors.js';
import { overrideAt, type Override } from './overrides.js';
import { didYouMean, nearest } from './didYouMean.js';

/**
 * The YAML file reader with positions, shared by every file metabench reads (experiments,
 * sweeps, the llm-stub's latency profiles): refuses bad files early and words each schema
 * issue at its line and column.
 */

/** Files larger than this are refused before parsing: an experiment is a page of YAML. */
const MAX_FILE_BYTES = 1 << 20;

/**
 * A spec file's bytes, or a SpecError naming the file. A missing file says so and names
 * the nearest YAML files of its folder and of `alsoIn` (the catalogue, for an experiment).
 */
export function readSpecFile(file: string, alsoIn: readonly string[] = []): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SpecError([
      {
        file,
        path: '',
        message:
          code === 'ENOENT'
            ? `no such file${nearbyNames(file, alsoIn)}`
            : code === 'EISDIR'
              ? 'is a folder, not a YAML file'
              : `cannot read the file (${code ?? (err as Error).message})`,
      },
    ]);
  }
}

/** "; nearest names: a.yaml, b.yaml" from the file's folder and `alsoIn`, or "". */
function nearbyNames(file: string, alsoIn: readonly string[]): string {
  const paths: string[] = [];
  for (const dir of [dirname(file), ...alsoIn])
    try {
      for (const f of readdirSync(dir))
        if (/\.ya?ml$/.test(f)) {
          const p = join(dir, f);
          const shown = isAbsolute(p) ? relative(process.cwd(), p) : p;
          const path = shown.startsWith('..') ? p : shown;
          if (!paths.includes(path)) paths.push(path);
        }
    } catch {
      // A folder that does not exist offers no names.
    }
  const byName = new Map<string, string>();
  for (const p of paths) if (!byName.has(basename(p))) byName.set(basename(p), p);
  const close = nearest(basename(file), [...byName.keys()]).map((n) => byName.get(n)!);
  return close.length ? `; nearest names: ${close.join(', ')}` : '';
}

/** A YAML file parsed into plain data, with what is needed to locate a field in it. */
export interface ParsedYaml {
  readonly data: Record<string, unknown>;
  readonly doc: Document;
  readonly lines: LineCounter;
  readonly file: string;
}

/**
 * Parses a spec file (experiment or sweep) into a top-level mapping. Refuses quickly, with
 * a location where one exists: oversized, binary and empty files, YAML syntax errors,
 * duplicate keys, and alias bombs.
 */
export function parseYamlFile(buf: Buffer | string, file: string, what = 'an experiment'): ParsedYaml {
  if (buf.length > MAX_FILE_BYTES)
    throw new SpecError([{ file, path: '', message: `the file is larger than ${MAX_FILE_BYTES} bytes` }]);
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  if (text.includes('\u0000') || text.includes('\ufffd'))
    throw new SpecError([
      {
        file,
        path: '',
        message: `the file is not text (it contains binary data); ${what} file is YAML`,
      },
    ]);
  // Line by line: one pattern over the whole text, /^(\s*#.*\n?)*\s*$/, backtracked
  // exponentially in the comment lines before the first key (each newline matched by \n?
  // or by the next \s*): an experiment opening with 27 lines of comment took 90 s to load.
  if (text.split('\n').every((line) => /^\s*(?:#[^\n]*)?$/.test(line)))
    throw new SpecError([
      {
        file,
        path: '',
        message:
          what === 'an experiment'
            ? 'the file is empty; an experiment needs at least name, lab, load, client, schedule and recovery'
            : `the file is empty; ${what} file is a YAML mapping`,
      },
    ]);

  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    throw new SpecError(
      doc.errors.map((e) => {
        const pos = lines.linePos(e.pos[0]);
        return {
          file,
          line: pos.line,
          column: pos.col,
          path: '',
          message: `YAML syntax: ${firstLine(e.message)}`,
        };
      }),
    );
  }
  let data: unknown;
  try {
    // Aliases are expanded at most 100 times: a "billion laughs" file is refused, not expanded.
    data = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw new SpecError([
      { file, path: '', message: `cannot expand the YAML: ${firstLine((err as Error).message)}` },
    ]);
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new SpecError([
      {
        file,
        line: 1,
        column: 1,
        path: '',
        message: `the top level must be a mapping of fields (${what === 'an experiment' ? 'name:, lab:, load:, …' : 'name:, experiment:, factors:, …'})`,
      },
    ]);
  return { data: data as Record<string, unknown>, doc, lines, file };
}

/** Locates each schema issue in the YAML source and words it for a person. */
export function toSpecIssues(
  issues: readonly z.core.$ZodIssue[],
  doc: Document,
  lines: LineCounter,
  file: string,
  overrides: readonly Override[] = [],
  schema: unknown,
): SpecIssue[] {
  const out: SpecIssue[] = [];
  for (const iss of issues) {
    const path = iss.path.map(String);
    if (iss.code === 'unrecognized_keys') {
      const parent = doc.getIn(iss.path as unknown[], true);
      for (const key of iss.keys) {
        const keyNode = isMap(parent)
          ? parent.items.find((p) => isNode(p.key) && String((p.key as { value?: unknown }).value) === key)
              ?.key
          : undefined;
        const known = knownKeysAt(schema, iss.path as PropertyKey[]);
        const guess = didYouMean(key, known);
        const o = overrideAt([...iss.path, key], overrides);
        out.push({
          file,
          ...(o?.relation === 'from' ? {} : position(keyNode, lines)),
          path: [...path, key].join('.'),
          message: `unknown field${guess ? `; did you mean "${guess}"?` : known.length ? ` (known: ${known.join(', ')})` : ''}${o ? ` (${o.relation} ${o.override.source})` : ''}`,
        });
      }
      continue;
    }
    // Point at the deepest node that exists: a missing field is reported at its parent.
    let node: unknown;
    for (let n = iss.path.length; n >= 0 && node === undefined; n--)
      node = doc.getIn(iss.path.slice(0, n) as unknown[], true);
    const missing = iss.code === 'invalid_type' && (iss as { input?: unknown }).input === undefined;
    const o = overrideAt(iss.path, overrides);
    out.push({
      file,
      ...(o?.relation === 'from' ? {} : position(node, lines)),
      path: path.join('.'),
      message: `${missing ? 'is required' : iss.message}${o ? ` (${o.relation} ${o.override.source})` : ''}`,
    });
  }
  return out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
}

/** Where a field's key is written in the file ({} when the field is not in it, e.g. set on the command line). */
export function locate(
  y: ParsedYaml,
  path: readonly (string | number)[],
): { line?: number; column?: number } {
  const parent = path.length > 1 ? y.doc.getIn(path.slice(0, -1), true) : y.doc.contents;
  const key = path[path.length - 1];
  const pair = isMap(parent)
    ? parent.items.find((p) => isNode(p.key) && String((p.key as { value?: unknown }).value) === String(key))
    : undefined;
  return position(pair?.key ?? y.doc.getIn(path, true), y.lines);
}

function position(node: unknown, lines: LineCounter): { line?: number; column?: number } {
  const range = (node as { range?: [number, number, number] } | undefined)?.range;
  if (!range) return {};
  const p = lines.linePos(range[0]);
  return { line: p.line, column: p.col };
}

/** The keys the schema allows at an object path (for did-you-mean). */
function knownKeysAt(schema: unknown, path: readonly PropertyKey[]): string[] {
  let s: unknown = schema;
  for (const seg of path) {
    s = unwrap(s);
    const element = (s as { _zod?: { def?: { type?: string; element?: unknown; valueType?: unknown } } })._zod
      ?.def;
    if (typeof seg === 'number' && element?.type === 'array') {
      s = element.element;
      continue;
    }
    // A record (hypothesis.classes): any key leads to its value's schema.
    if (typeof seg === 'string' && element?.type === 'record') {
      s = element.valueType;
      continue;
    }
    const shape = (s as { shape?: Record<string, unknown> }).shape;
    if (!shape || typeof seg !== 'string') return [];
    s = shape[seg];
  }
  s = unwrap(s);
  const shape = (s as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

function unwrap(s: unknown): unknown {
  for (let i = 0; i < 10; i++) {
    const def = (s as { _zod?: { def?: { type?: string; innerType?: unknown; in?: unknown } } })._zod?.def;
    if (!def) return s;
    if (def.innerType) s = def.innerType;
    else if (def.type === 'pipe' && def.in) s = def.in;
    else return s;
  }
  return s;
}

function firstLine(s: string): string {
  return s.split('\n')[0] ?? s;
}
