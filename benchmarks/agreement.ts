/**
 * Lab and simulation agree, per experiment (issue 17, point 10; issue 32, point 7):
 * `npm run agreement`.
 *
 * Runs every catalogue experiment (experiments/*.yaml, not the sweep files) once on the
 * local lab and once as its simulated twin (`--runtime sim`), at the reproduction suite's
 * scale (each at its smallest accepted scale, at least SUITE_MIN_SCALE:
 * orchestrator/model/agreement.ts), with the same seed and the nominal capacity on both
 * sides, through the same runExperiment as `metabench run`, into results/agreement/
 * (rows.json and each run's folder); then packs the lab runs' records into the committed
 * store (benchmarks/results/agreement/: benchmarks/agreement/store.ts) and writes
 * docs/agreement.md from the store.
 *
 *   node dist/benchmarks/agreement.js                 every experiment (~90 min of lab time)
 *   node dist/benchmarks/agreement.js NAME...         only these (e.g. rerun the invalid ones);
 *                                                     the others' rows and records are kept
 *   node dist/benchmarks/agreement.js --pack          pack an existing results/agreement/ into
 *                                                     the store, and write the doc from it
 *   node dist/benchmarks/agreement.js --render        only write the doc from the store
 *   node dist/benchmarks/agreement.js --reanalyse     analyse each stored record again, simulate
 *                                                     each twin again, update the store and the doc
 *   node dist/benchmarks/agreement.js --check         exit 1 where the store or the doc is not
 *                                                     what that re-analysis gives (CI)
 *
 * --store DIR, --doc FILE, --results DIR and --root DIR (where experiments/ is) move the
 * files (the tests use them).
 *
 * step-test.yaml enters like every other file: it declares a schedule with a 10 s pause,
 * and `metabench run` runs it so. Its own claim (the saturation point) is `metabench
 * calibrate`'s, which measures a real lab and refuses `--runtime sim`; the reproduction
 * suite checks it on the lab. Experiments the simulation cannot model (orchestrator/model/agreement.ts)
 * run on the lab only and are listed with the reason.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { round } from '../foundation/round.js';
import { simCannotModel } from '../orchestrator/model/agreement.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { loadExperimentFile } from '../orchestrator/spec/load.js';
import { checkAgreement, type Paths } from './agreement/check.js';
import { reanalyseStore } from './agreement/reanalyse.js';
import { render, STORE_PATH } from './agreement/render.js';
import { catalogue, type Row, type Rows } from './agreement/rows.js';
import { runSide } from './agreement/runs.js';
import { pack, readStore, STORE_FILE, writeStore } from './agreement/store.js';

registerRuntimes();

const REPO = fileURLToPath(new URL('../../', import.meta.url));

function rowsFile(p: Paths): string {
  return join(p.results, 'rows.json');
}

/** The rows a run adds to: results/agreement/rows.json, else the store's, else none. */
function loadRows(p: Paths): Rows {
  if (existsSync(rowsFile(p))) return JSON.parse(readFileSync(rowsFile(p), 'utf8')) as Rows;
  if (existsSync(join(p.store, STORE_FILE))) {
    const s = readStore(p.store);
    return { machine: s.machine, startedAt: s.startedAt, loadAvgAtStart: s.loadAvgAtStart, rows: s.rows };
  }
  return { machine: describeMachine(), startedAt: new Date().toISOString(), loadAvgAtStart: [], rows: {} };
}

function saveRows(p: Paths, rows: Rows): void {
  mkdirSync(p.results, { recursive: true });
  writeFileSync(rowsFile(p), `${JSON.stringify(rows, null, 2)}\n`);
}

async function runAll(p: Paths, only: string[]): Promise<void> {
  const rows = loadRows(p);
  const files = catalogue(p.root).filter(
    (f) => only.length === 0 || only.some((n) => f.endsWith(`/${n}.yaml`)),
  );
  const unknown = only.filter((n) => !files.some((f) => f.endsWith(`/${n}.yaml`)));
  if (unknown.length > 0) throw new Error(`not in the catalogue (experiments/*.yaml): ${unknown.join(', ')}`);
  if (only.length === 0) {
    // A full run starts the record afresh, on this machine, now.
    rows.machine = describeMachine();
    rows.startedAt = new Date().toISOString();
    rows.loadAvgAtStart = loadavg().map((x) => round(x, 2));
    rows.rows = {};
  }
  // The simulations first (seconds each), then the lab runs one at a time.
  for (const side of ['sim', 'lab'] as const)
    for (const file of files) {
      const e = loadExperimentFile(join(p.root, file));
      const row: Row = rows.rows[e.name] ?? { name: e.name, file, cannotModel: simCannotModel(e) };
      rows.rows[e.name] = row;
      if (side === 'sim' && row.cannotModel !== null) continue;
      process.stderr.write(`agreement: ${e.name} (${side}) ...`);
      if (side === 'lab' && row.lab) row.earlierLab = [...(row.earlierLab ?? []), row.lab];
      const r = await runSide(p.root, file, join(p.results, e.name, side), side === 'lab' ? 'local' : 'sim');
      row[side] = r;
      process.stderr.write(
        ` ${r.summary?.outcome ?? `error: ${r.error}`} (${r.wallS} s, load ${r.loadAvg1})\n`,
      );
      saveRows(p, rows);
    }
  packAndRender(p);
}

function packAndRender(p: Paths): void {
  const s = pack(p.results, p.store);
  process.stderr.write(`agreement: packed ${p.results} into ${p.store}\n`);
  writeDoc(p, render(s));
}

function writeDoc(p: Paths, text: string): void {
  writeFileSync(p.doc, text);
  process.stderr.write(`agreement: wrote ${p.doc}\n`);
}

/** `file` relative to the working folder when it is under it, else as it is. */
function shortPath(file: string): string {
  const r = relative(process.cwd(), file);
  return r === '' || r.startsWith('..') ? file : r;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      pack: { type: 'boolean' },
      render: { type: 'boolean' },
      reanalyse: { type: 'boolean' },
      check: { type: 'boolean' },
      root: { type: 'string' },
      results: { type: 'string' },
      store: { type: 'string' },
      doc: { type: 'string' },
    },
  });
  const root = resolve(values.root ?? REPO);
  const p: Paths = {
    root,
    results: resolve(values.results ?? join(root, 'results', 'agreement')),
    store: resolve(values.store ?? join(root, STORE_PATH)),
    doc: resolve(values.doc ?? join(root, 'docs', 'agreement.md')),
  };
  const modes = (['pack', 'render', 'reanalyse', 'check'] as const).filter((m) => values[m]);
  if (modes.length > 1 || (modes.length === 1 && positionals.length > 0))
    throw new Error(
      `give one of --pack, --render, --reanalyse, --check, or experiment names (got ${process.argv.slice(2).join(' ')})`,
    );
  const mode = modes[0];
  if (mode === 'pack') packAndRender(p);
  else if (mode === 'render') writeDoc(p, render(readStore(p.store)));
  else if (mode === 'reanalyse') {
    const again = await reanalyseStore(p.root, p.store, readStore(p.store));
    writeStore(p.store, again);
    process.stderr.write(`agreement: re-analysed the records in ${p.store}\n`);
    writeDoc(p, render(again));
  } else if (mode === 'check') {
    const problems = await checkAgreement(p);
    const doc = shortPath(p.doc);
    if (problems.length > 0) {
      process.stderr.write(
        `agreement --check: ${problems.length} difference${problems.length === 1 ? '' : 's'} between the committed ${doc} and its store, and what this revision gives:\n${problems.map((x) => `  ${x}`).join('\n')}\n` +
          `If the analysis or the simulator changed on purpose: npm run agreement -- --reanalyse (then commit ${doc} and ${shortPath(join(p.store, STORE_FILE))}).\n`,
      );
      return 1;
    }
    process.stderr.write(
      `agreement --check: ${doc} is what its store's records and this revision's simulator give\n`,
    );
  } else await runAll(p, positionals);
  return 0;
}

// Run as a program (not when a test imports checkAgreement).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = await main();
  } catch (err) {
    process.stderr.write(`agreement: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
}
