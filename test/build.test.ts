import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Issue 33: the first `npx metabench` compiled the project silently (npm installs the
// folder's own package into its npx cache as a link, and runs the link's `prepare`: 28 s of
// tsc). dist/ is built once at install; `prepare` compiles again only when a source changed
// and says so; the CLI never compiles, and warns when dist/ is older than the sources.
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const BUILD = join(REPO, 'scripts/build.mjs');
const build = (await import(pathToFileURL(BUILD).href)) as {
  staleSources(root?: string): string[];
};

test('package.json: bin is the compiled CLI, prepare compiles only a stale dist/, and no install script compiles', () => {
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    scripts: Record<string, string>;
  };
  assert.equal(pkg.bin.metabench, 'dist/orchestrator/cli/main.js');
  assert.equal(pkg.scripts.prepare, 'node scripts/build.mjs --if-stale');
  for (const s of ['preinstall', 'install', 'postinstall', 'prepack'])
    assert.equal(pkg.scripts[s], undefined, `${s} would run on install`);
});

/** A source tree like the repository's: tsconfig.json, a.ts and its compiled dist/src/a.js. */
function tree(): string {
  const root = mkdtempSync(join(tmpdir(), 'metabench-build-'));
  writeFileSync(
    join(root, 'tsconfig.json'),
    JSON.stringify({ include: ['src'], compilerOptions: { outDir: 'dist' } }),
  );
  mkdirSync(join(root, 'src'));
  mkdirSync(join(root, 'dist/src'), { recursive: true });
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
  writeFileSync(join(root, 'src/types.d.ts'), 'declare const b: number;\n');
  writeFileSync(join(root, 'dist/src/a.js'), 'export const a = 1;\n');
  const t = new Date('2026-01-01T00:00:00Z');
  utimesSync(join(root, 'src/a.ts'), t, t);
  utimesSync(join(root, 'src/types.d.ts'), t, t);
  utimesSync(join(root, 'dist/src/a.js'), new Date(t.getTime() + 1000), new Date(t.getTime() + 1000));
  return root;
}

test('staleSources: none when every source is older than its compiled file; a newer or uncompiled source is named', () => {
  const root = tree();
  assert.deepEqual(build.staleSources(root), []);
  writeFileSync(join(root, 'src/b.ts'), 'export const b = 2;\n');
  assert.deepEqual(build.staleSources(root), [join('src', 'b.ts')]);
  writeFileSync(join(root, 'dist/src/b.js'), '');
  const later = new Date(statSync(join(root, 'dist/src/b.js')).mtimeMs + 5000);
  utimesSync(join(root, 'src/a.ts'), later, later);
  assert.deepEqual(build.staleSources(root), [join('src', 'a.ts')]);
  assert.deepEqual(
    build.staleSources(mkdtempSync(join(tmpdir(), 'metabench-pkg-'))),
    [],
    'no sources: nothing stale',
  );
});

test('prepare (--if-stale) is silent on an up-to-date dist/ and says what changed before it compiles', () => {
  const root = tree();
  const fresh = spawnSync(process.execPath, [BUILD, '--if-stale', '--dry-run', '--root', root], {
    encoding: 'utf8',
  });
  assert.equal(fresh.status, 0, fresh.stderr);
  assert.equal(fresh.stderr, '');
  assert.match(fresh.stdout, /up to date: nothing to build/);
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 2;\n');
  const stale = spawnSync(process.execPath, [BUILD, '--if-stale', '--dry-run', '--root', root], {
    encoding: 'utf8',
  });
  assert.equal(stale.status, 0, stale.stderr);
  assert.match(stale.stderr, /dist\/ is older than the sources \(src\/a\.ts\): compiling them/);
  assert.match(stale.stdout, /would run tsc/);
});

test('the first npx metabench (an empty npx cache) compiles nothing', (t) => {
  if (build.staleSources().length > 0) {
    t.skip('dist/ is older than the sources here: npx would rightly compile them');
    return;
  }
  const main = join(REPO, 'dist/orchestrator/cli/main.js');
  const before = statSync(main).mtimeMs;
  const cache = mkdtempSync(join(tmpdir(), 'metabench-npx-cache-'));
  const r = spawnSync('npx', ['--offline', 'metabench', '--version'], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^\d+\.\d+\.\d+/);
  assert.doesNotMatch(r.stderr, /compiling|older than the sources/);
  assert.equal(statSync(main).mtimeMs, before, 'dist/ was not rebuilt');
});

test('the CLI warns when dist/ is older than the sources, naming one, and compiles nothing', async () => {
  const { staleBuildWarning } = await import('../orchestrator/cli/staleBuild.js');
  const root = tree();
  assert.equal(await staleBuildWarning(root), undefined);
  writeFileSync(join(root, 'src/a.ts'), 'export const a = 2;\n');
  assert.match(
    (await staleBuildWarning(root)) ?? '',
    /^metabench: dist\/ is older than the sources \(src\/a\.ts\): .*`npm run build`/,
  );
  assert.deepEqual(build.staleSources(root), [join('src', 'a.ts')], 'still stale: the warning built nothing');
});
