/**
 * The metric names a PromQL expression reads: identifiers that are neither functions
 * (followed by `(`), keywords, label names (inside `{…}` or `by/without (…)`), nor
 * durations; histogram series (`_bucket`, `_sum`, `_count`) keep their suffix.
 */
export function metricNames(expr: string): string[] {
  const names = new Set<string>();
  // Drop quoted strings, label matchers, grouping clauses and range selectors first.
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const re = /[A-Za-z_:][A-Za-z0-9_:]*/g;
  for (let m = re.exec(bare); m; m = re.exec(bare)) {
    const id = m[0];
    const after = bare.slice(m.index + id.length).trimStart();
    if (after.startsWith('(')) continue; // a function or an aggregation
    if (KEYWORDS.has(id)) continue;
    if (/^\d/.test(id)) continue;
    names.add(id);
  }
  return [...names];
}

const KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'bool',
  'offset',
  'by',
  'without',
  'on',
  'ignoring',
  'inf',
  'nan',
]);

/** A histogram series' base metric (`x_bucket` → `x`), for matching against a registry's names. */
export function baseMetric(name: string, histograms: ReadonlySet<string>): string {
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m && histograms.has(m[1]!) ? m[1]! : name;
}
