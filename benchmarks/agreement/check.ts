import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareStores, reanalyseStore } from './reanalyse.js';
import { render } from './render.js';
import { catalogue } from './rows.js';
import { readStore, STORE_FILE } from './store.js';

/**
 * `npm run agreement -- --check`: the committed docs/agreement.md against what its store
 * renders, line by line. The store's figures against the records' re-analysis and this
 * revision's simulator are compared by compareStores (reanalyse.ts).
 */

/** The experiment a line of the doc is about (its first `name`), or null. */
function experimentOf(line: string): string | null {
  return /^(?:\| |- )`([^`]+)`/.exec(line)?.[1] ?? null;
}

/**
 * A line diff of `actual` (the committed doc) against `expected` (what the store renders):
 * the lines only one has, each with its line number in the doc, whose they are (the file's,
 * or what the store renders) and the experiment it is about. Empty when they are the same.
 * A longest common subsequence of lines: the doc has about a hundred.
 */
export function docDiff(file: string, actual: string, expected: string): string[] {
  if (actual === expected) return [];
  const a = actual.split('\n');
  const b = expected.split('\n');
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..].
  const lcs = Array.from({ length: a.length + 1 }, () => new Uint32Array(b.length + 1));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: string[] = [];
  const about = (line: string): string => {
    const name = experimentOf(line);
    return name ? ` (${name})` : '';
  };
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      i++;
      j++;
    } else if (j < b.length && (i === a.length || lcs[i]![j + 1]! >= lcs[i + 1]![j]!)) {
      out.push(`${file}:${i + 1}${about(b[j]!)}: the store renders: ${b[j]}`);
      j++;
    } else {
      out.push(`${file}:${i + 1}${about(a[i]!)}: the file has:      ${a[i]}`);
      i++;
    }
  }
  return out;
}

export interface Paths {
  /** Where experiments/ is, and what a row's file is relative to. */
  readonly root: string;
  readonly results: string;
  readonly store: string;
  readonly doc: string;
}

/** Every way the store and the doc are not what the store's records and this revision's simulator give. */
export async function checkAgreement(p: Paths): Promise<string[]> {
  const stored = readStore(p.store);
  const problems = compareStores(p.store, stored, await reanalyseStore(p.root, p.store, stored));
  const files = new Set(Object.values(stored.rows).map((r) => r.file));
  for (const f of catalogue(p.root))
    if (!files.has(f)) problems.push(`${f}: in the catalogue, not in ${join(p.store, STORE_FILE)}`);
  const doc = existsSync(p.doc) ? readFileSync(p.doc, 'utf8') : '';
  problems.push(...docDiff(p.doc, doc, render(stored)));
  return problems;
}
