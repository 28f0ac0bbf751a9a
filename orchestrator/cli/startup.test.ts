import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CLI, REPO } from '../../test/helpers/cli.js';

/**
 * The modules `metabench ARGS` loads, as file URLs: a resolve hook registered before the CLI
 * starts writes each one it resolves to a file.
 */
function modulesLoaded(args: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-startup-'));
  const log = join(dir, 'loaded.txt');
  writeFileSync(
    join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');
  return r;
}
`,
  );
  writeFileSync(
    join(dir, 'register.mjs'),
    `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});
`,
  );
  const r = spawnSync(
    process.execPath,
    ['--import', pathToFileURL(join(dir, 'register.mjs')).href, CLI, ...args],
    {
      cwd: REPO,
      encoding: 'utf8',
      env: { ...process.env, METABENCH_STATE_DIR: join(dir, 'state') },
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

const has = (loaded: string[], part: string): boolean => loaded.some((u) => u.includes(part));

// What makes a command start slowly: vega and vega-lite (figures), pdfkit (PDF figures),
// dockerode (the Docker runtimes), the simulator and the labs. A command that needs none of
// them (validate, report's help) must not load them; each is loaded where it is used.
const HEAVY = [
  '/node_modules/vega/',
  '/node_modules/vega-lite/',
  '/node_modules/pdfkit/',
  '/node_modules/dockerode/',
];

test('validate loads neither the runtimes nor the figure, PDF and Docker libraries', () => {
  const loaded = modulesLoaded(['validate', 'experiments/retry-storm.yaml']);
  assert.ok(has(loaded, '/dist/orchestrator/cli/validate.js'), 'validate itself is loaded');
  for (const part of [
    ...HEAVY,
    '/dist/sim/',
    '/dist/orchestrator/lab/local/',
    '/dist/orchestrator/cli/run.js',
  ])
    assert.ok(!has(loaded, part), `validate loaded ${part}`);
});

test('run --dry-run loads the runtimes but not the figure, PDF and Docker libraries', () => {
  const loaded = modulesLoaded(['run', 'experiments/retry-storm.yaml', '--dry-run']);
  assert.ok(has(loaded, '/dist/orchestrator/cli/runtimes.js'), 'the runtimes are registered');
  for (const part of HEAVY) assert.ok(!has(loaded, part), `run --dry-run loaded ${part}`);
});

test('--version loads no command, no runtime, no trigger and does not stat the sources', () => {
  const loaded = modulesLoaded(['--version']);
  for (const part of [
    ...HEAVY,
    '/dist/orchestrator/cli/run.js',
    '/dist/orchestrator/cli/runtimes.js',
    '/dist/orchestrator/trigger/',
    '/dist/sim/',
    '/scripts/build.mjs',
    '/node_modules/zod/',
  ])
    assert.ok(!has(loaded, part), `--version loaded ${part}`);
});

test("run --runtime sim loads the simulation's runtime alone, and not the run's code on the main thread", () => {
  const loaded = modulesLoaded(['run', 'experiments/retry-storm.yaml', '--runtime', 'sim', '--dry-run']);
  assert.ok(has(loaded, '/dist/sim/runtime.js'), "the simulation's runtime is registered");
  for (const part of [
    ...HEAVY,
    '/dist/orchestrator/cli/runtimes.js',
    '/dist/orchestrator/lab/local/runtime.js',
    '/dist/orchestrator/lab/docker/runtime.js',
    '/dist/orchestrator/lab/swarm/runtime.js',
    '/dist/orchestrator/run/runExperiment.js',
    '/dist/orchestrator/report/writeReport.js',
    '/node_modules/apache-arrow/',
  ])
    assert.ok(!has(loaded, part), `run --runtime sim --dry-run loaded ${part}`);
});

test('a small simulated run loads neither the live metrics, the report reader nor the swarm scrape reader', () => {
  const dir = mkdtempSync(join(tmpdir(), 'metabench-startup-run-'));
  const file = join(dir, 'short.yaml');
  writeFileSync(
    file,
    `name: short
lab:
  api: { workers: 100, work: { dist: exponential, mean: 20ms }, queue: fifo }
load: { arrival: poisson, rate: 1000/s }
client: { timeout: 500ms }
schedule: { warmup: 1s, baseline: 2s, trigger: { kind: pause, target: api, duration: 1s }, observe: 2s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`,
  );
  const out = join(dir, 'out');
  const loaded = modulesLoaded([
    'run',
    file,
    '--runtime',
    'sim',
    '--quiet',
    '--events',
    'none',
    '--report',
    'none',
    '--out',
    out,
  ]);
  assert.ok(has(loaded, '/dist/orchestrator/run/runExperiment.js'), 'the run ran on this thread');
  for (const part of [
    ...HEAVY,
    '/node_modules/prom-client/',
    '/node_modules/csv-parse/',
    '/dist/orchestrator/live/',
    '/dist/orchestrator/report/',
    '/dist/orchestrator/lab/swarm/clientScrape.js',
    // --events none: no event log writer, nor its Arrow and LZ4 code.
    '/dist/bench/record/eventLog.js',
    '/dist/bench/record/arrowEvents.js',
    '/node_modules/lz4js/',
    // timeseries.arrow is written with Arrow's single-file build, not its module tree; the
    // histograms are hdr-histogram-js's class alone, not its root (WebAssembly, pako).
    '/node_modules/apache-arrow/Arrow.node.mjs',
    '/node_modules/hdr-histogram-js/dist/index.js',
    '/node_modules/hdr-histogram-js/dist/wasm/',
  ])
    assert.ok(!has(loaded, part), `a simulated run loaded ${part}`);
});

test('--help lists every command', () => {
  const r = spawnSync(process.execPath, [CLI, '--help'], { cwd: REPO, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  for (const name of [
    'run',
    'sweep',
    'calibrate',
    'load',
    'report',
    'compare',
    'model',
    'validate',
    'schema',
    'lab',
    'faultproxy',
    'llm-stub',
    'export',
  ])
    assert.match(r.stdout, new RegExp(`^  ${name}\\b`, 'm'), `--help lists ${name}`);
});
