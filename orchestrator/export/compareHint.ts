/**
 * After `metabench run --from-bundle FILE` (or `sweep --from-bundle`): the shell line that unpacks the bundle beside
 * the new results and compares the two (the bundled results folder is one `compare` reads:
 * its run-<i>/summary.json and manifest.json, no timeseries needed).
 */
export function compareHint(bundleFile: string, resultsDir: string, points?: readonly string[]): string {
  const dir = resultsDir.replace(/\/+$/, '');
  const unpacked = `${dir}-bundled`;
  // A sweep's: each point beside its bundled original (compare reads experiment folders).
  const pairs = points
    ? points.map((p) => [`${unpacked}/bundle/results/${p}`, `${dir}/${p}`])
    : [[`${unpacked}/bundle/results`, resultsDir]];
  return [
    `mkdir -p ${sh(unpacked)}`,
    `tar -xzf ${sh(bundleFile)} -C ${sh(unpacked)}`,
    ...pairs.map(([a, b]) => `metabench compare ${sh(a!)} ${sh(b!)}`),
  ].join(' && ');
}

/** A word the shell reads as written: bare when it is plain, else in single quotes. */
export function sh(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
