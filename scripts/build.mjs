#!/usr/bin/env node
// Builds dist/ from the TypeScript sources (tsc), once: `npm install` and `npm ci` run this
// as the `prepare` script with --if-stale, and so does the first `npx metabench` (npm installs
// the folder's own package into its npx cache as a link, and a link's `prepare` runs: that
// was a silent 28 s tsc). With --if-stale it compiles only when a source is newer than its
// compiled file, and says so; `npm run build` always compiles. The CLI never builds: it
// warns when dist/ is older than the sources (orchestrator/cli/main.ts).
//
// Plain JavaScript, no dependencies: it runs before dist/ exists.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/**
 * The sources (tsconfig.json's `include` folders, .ts but not .d.ts) whose compiled file in
 * dist/ is missing or older, as paths relative to `root`; [] when dist/ is up to date, and
 * also when `root` has no sources (an installed package ships dist/ alone).
 */
export function staleSources(root = ROOT) {
  const tsconfig = join(root, 'tsconfig.json');
  if (!existsSync(tsconfig)) return [];
  const { include = [], compilerOptions = {} } = JSON.parse(readFileSync(tsconfig, 'utf8'));
  const outDir = join(root, compilerOptions.outDir ?? 'dist');
  const stale = [];
  const walk = (dir) => {
    let names;
    try {
      names = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const d of names) {
      const p = join(dir, d.name);
      if (d.isDirectory()) {
        if (d.name !== 'node_modules') walk(p);
      } else if (d.name.endsWith('.ts') && !d.name.endsWith('.d.ts')) {
        const out = join(outDir, relative(root, p)).replace(/\.ts$/, '.js');
        let built = 0;
        try {
          built = statSync(out).mtimeMs;
        } catch {
          // not compiled yet
        }
        if (statSync(p).mtimeMs > built) stale.push(relative(root, p));
      }
    }
  };
  for (const dir of include) walk(join(root, dir));
  return stale;
}

/** One line naming what changed: "orchestrator/cli/run.ts and 3 more files". */
export function describeStale(stale) {
  return stale.length === 1 ? stale[0] : `${stale[0]} and ${stale.length - 1} more files`;
}

function main(argv) {
  const root = argv.includes('--root') ? argv[argv.indexOf('--root') + 1] : ROOT;
  const ifStale = argv.includes('--if-stale');
  const dryRun = argv.includes('--dry-run');
  if (ifStale) {
    const stale = staleSources(root);
    if (stale.length === 0) {
      if (dryRun) process.stdout.write('dist/ is up to date: nothing to build\n');
      return 0;
    }
    process.stderr.write(
      `metabench: dist/ is older than the sources (${describeStale(stale)}): compiling them (tsc, about 30 s)\n`,
    );
  }
  if (dryRun) {
    process.stdout.write('would run tsc -p tsconfig.json\n');
    return 0;
  }
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json')], { stdio: 'inherit' });
  return r.status ?? 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href)
  process.exitCode = main(process.argv.slice(2));
