import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/** results/index: one line per run or sweep, appended when it ends (finished, interrupted or failed). */
export const INDEX_FILE = 'index';

export interface IndexEntry {
  /** When it ended, UTC, to the second: 2026-12-05T13:58:02Z. */
  readonly date: string;
  readonly kind: 'run' | 'sweep';
  /** The experiment or sweep file as given (or "(bundle)"). */
  readonly file: string;
  readonly runtime: string;
  readonly scale: number;
  /** The verdict ("metastable", "metastable 2/3"), or "interrupted" / "failed". */
  readonly outcome: string;
  /** "valid", "invalid", "2/3 valid". */
  readonly validity: string;
  /** The results folder, relative to the index's folder. */
  readonly folder: string;
}

export const INDEX_COLUMNS = [
  'date',
  'kind',
  'file',
  'runtime',
  'scale',
  'outcome',
  'validity',
  'folder',
] as const;
const HEADER = `# ${INDEX_COLUMNS.join('\t')}`;

/**
 * The index a results folder belongs in: the root's, when the folder sits directly in the
 * results root (named by metabench, or an --out there); none for a folder elsewhere, nor for
 * what lives inside another run's folder (a sweep's points, a twin).
 */
export function indexFor(dir: string, root = 'results'): string | null {
  return resolve(dirname(resolve(dir))) === resolve(root) ? join(root, INDEX_FILE) : null;
}

/** Tabs and line breaks would split a column or a line: a field holds neither. */
const field = (v: string | number): string => String(v).replace(/[\t\r\n]+/g, ' ');

/** Appends `e` to `root`'s index when `dir` belongs in it; returns the index file, or null. */
export function appendIndex(
  dir: string,
  e: Omit<IndexEntry, 'folder' | 'date'>,
  root = 'results',
  now = new Date(),
): string | null {
  const file = indexFor(dir, root);
  if (file === null) return null;
  const entry: IndexEntry = {
    ...e,
    date: now.toISOString().slice(0, 19) + 'Z',
    folder: relative(resolve(root), resolve(dir)),
  };
  const line = INDEX_COLUMNS.map((c) => field(entry[c])).join('\t');
  appendFileSync(file, (existsSync(file) ? '' : `${HEADER}\n`) + `${line}\n`);
  return file;
}

/** The index's entries, oldest first; null when there is no index file. */
export function readIndex(root = 'results'): IndexEntry[] | null {
  const file = join(root, INDEX_FILE);
  if (!existsSync(file)) return null;
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => {
      const v = l.split('\t');
      const at = (i: number): string => v[i] ?? '';
      return {
        date: at(0),
        kind: at(1) === 'sweep' ? 'sweep' : 'run',
        file: at(2),
        runtime: at(3),
        scale: Number(at(4)),
        outcome: at(5),
        validity: at(6),
        folder: at(7),
      };
    });
}

/** The index as an aligned table, a header line first. */
export function formatIndex(entries: readonly IndexEntry[]): string {
  const rows = [[...INDEX_COLUMNS], ...entries.map((e) => INDEX_COLUMNS.map((c) => String(e[c])))];
  const widths = INDEX_COLUMNS.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return (
    rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ')).join('\n') +
    '\n'
  );
}
