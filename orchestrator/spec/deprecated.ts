import { formatIssue, type SpecIssue } from '../../foundation/errors.js';
import { locate, type ParsedYaml } from '../../foundation/yamlFile.js';
import type { Experiment } from './schema.js';
import type { Thresholds } from './sections/hypothesis.js';

/** The metrics the deprecated `load.mix[].thresholds` had; each was judged as value <= limit. */
const MIX_METRICS = ['p95', 'errorRatio', 'ttftP95'] as const;

export interface Migrated {
  readonly experiment: Experiment;
  /** Deprecated spellings met, each at its place, with the spelling to write instead. */
  readonly warnings: readonly SpecIssue[];
  /** A threshold declared in both spellings: an error. */
  readonly issues: readonly SpecIssue[];
}

/**
 * Per-class thresholds have one home, `hypothesis.classes`, judged by one judge in the
 * baseline and after recovery. The older `load.mix[].thresholds` (p95: 300ms,
 * errorRatio: 0.1%, ttftP95: 1500ms) still reads: each limit x becomes "<= x" under the
 * class's name, with a warning showing the new spelling. The same metric of the same
 * class in both places is an error naming both.
 *
 * `data` is the file's data as validated (after --set overrides): the limits are copied
 * as the user wrote them, so the warning shows their own text.
 */
export function migrateMixThresholds(e: Experiment, y: ParsedYaml, data: Record<string, unknown>): Migrated {
  const mix = e.load.mix;
  if (!mix?.some((c) => c.thresholds !== undefined)) return { experiment: e, warnings: [], issues: [] };
  const rawMix = (data['load'] as { mix?: { thresholds?: Record<string, unknown> }[] } | undefined)?.mix;
  const classes: Record<string, Thresholds> = { ...e.hypothesis.classes };
  const warnings: SpecIssue[] = [];
  const issues: SpecIssue[] = [];
  mix.forEach((c, i) => {
    if (c.thresholds === undefined) return;
    const oldPath = ['load', 'mix', i, 'thresholds'];
    const declared = e.hypothesis.classes?.[c.name] ?? {};
    const moved: Record<string, string> = {};
    for (const m of MIX_METRICS) {
      if (c.thresholds[m] === undefined) continue;
      const text = `<= ${String(rawMix?.[i]?.thresholds?.[m] ?? '').trim()}`;
      if (declared[m] !== undefined) {
        const newPath = ['hypothesis', 'classes', c.name, m];
        const at = locate(y, [...oldPath, m]);
        const where = at.line !== undefined ? `${y.file}:${at.line}:${at.column ?? 1}` : y.file;
        issues.push({
          file: y.file,
          ...locate(y, newPath),
          path: newPath.join('.'),
          message: `declared twice: here and in the deprecated spelling at ${[...oldPath, m].join('.')} (${where}); keep only this one`,
        });
        continue;
      }
      moved[m] = text;
    }
    const shown = Object.entries(moved)
      .map(([m, t]) => `${m}: '${t}'`)
      .join(', ');
    if (shown) classes[c.name] = { ...declared, ...moved };
    warnings.push({
      file: y.file,
      ...locate(y, oldPath),
      path: oldPath.join('.'),
      message: shown
        ? `deprecated: per-class thresholds live in hypothesis.classes (judged in the baseline and after recovery); write instead hypothesis.classes.${c.name}: { ${shown} }`
        : 'deprecated: per-class thresholds live in hypothesis.classes; this one declares nothing new there, remove it',
    });
  });
  return {
    experiment: {
      ...e,
      load: { ...e.load, mix: mix.map(({ thresholds: _moved, ...c }) => c) },
      hypothesis: { ...e.hypothesis, classes },
    },
    warnings,
    issues,
  };
}

const warned = new Set<string>();

/** Prints a deprecation warning on stderr, once a process (a sweep validates its base once a point). */
export function warnOnce(w: SpecIssue): void {
  const line = `metabench: warning: ${formatIssue(w)}`;
  if (warned.has(line)) return;
  warned.add(line);
  process.stderr.write(`${line}\n`);
}
