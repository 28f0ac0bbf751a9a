/**
 * After `metabench run --from-bundle FILE`: the shell line that unpacks the bundle beside
 * the new results and compares the two (the bundled results folder is one `compare` reads:
 * its run-<i>/summary.json and manifest.json, no timeseries needed).
 */
export function compareHint(bundleFile: string, resultsDir: string): string {
  const unpacked = `${resultsDir.replace(/\/+$/, '')}-bundled`;
  return [
    `mkdir -p ${sh(unpacked)}`,
    `tar -xzf ${sh(bundleFile)} -C ${sh(unpacked)}`,
    `metabench compare ${sh(`${unpacked}/bundle/results`)} ${sh(resultsDir)}`,
  ].join(' && ');
}

/** A word the shell reads as written: bare when it is plain, else in single quotes. */
export function sh(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
