/**
 * The first hour, timed (npm run bench:first-hour; issue 33): what a new user waits for on a
 * fresh clone. It clones this repository's HEAD (committed work only) into a temporary folder,
 * runs `npm ci` there (which builds dist/ once), then every command of the README's first
 * screen and of docs/guide.md as the docs give them (benchmarks/firstHourDocs.ts reads them),
 * through `npx` with an empty npx cache, and prints each one's wall time (and its CPU time,
 * children included, where /usr/bin/time is there) beside the time the docs claim, with the
 * machine and its load. A lab command runs with --dry-run (its plan and estimate) unless
 * `--lab` is given: each takes minutes, the guide's sweep about 24.
 *
 * It writes benchmarks/results/first-hour-<date>.md and asserts nothing: the claims it times
 * are measured wall times, which test/integration/first-hour.test.ts does not assert (it runs
 * the same commands and checks their output and the dry runs' computed estimates).
 *
 *   --lab        run the lab commands for real
 *   --keep       keep the clone (its path is printed)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeMachine } from '../orchestrator/results/manifest.js';
import { claimedS, estimateS, firstHour, saveFiles, simulated, words } from './firstHourDocs.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const RESULTS = join(REPO, 'benchmarks/results');
const LAB = process.argv.includes('--lab');
const KEEP = process.argv.includes('--keep');
const TIME = ['/usr/bin/time'].find((p) => existsSync(p));

interface Timed {
  what: string;
  command: string;
  claim: string;
  wallS: number;
  cpuS: number | null;
  load1: number;
  code: number | null;
  note: string;
}
const rows: Timed[] = [];
const load1 = () => Math.round(loadavg()[0]! * 100) / 100;

/** Runs `argv` in `cwd`, timed; its output is kept for the caller. */
function timed(what: string, cwd: string, argv: string[], claim: string, env: NodeJS.ProcessEnv = {}) {
  const stats = join(tmpdir(), `metabench-first-hour-time-${process.pid}`);
  const full = TIME ? [TIME, '-f', '%U %S', '-o', stats, ...argv] : argv;
  const load = load1();
  const t0 = process.hrtime.bigint();
  const r = spawnSync(full[0]!, full.slice(1), {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  const wallS = Number(process.hrtime.bigint() - t0) / 1e9;
  let cpuS: number | null = null;
  if (TIME && existsSync(stats)) {
    const [u, s] = readFileSync(stats, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
    if (Number.isFinite(u) && Number.isFinite(s)) cpuS = u! + s!;
    rmSync(stats, { force: true });
  }
  const row: Timed = {
    what,
    command: argv.join(' '),
    claim,
    wallS,
    cpuS,
    load1: load,
    code: r.status,
    note: '',
  };
  rows.push(row);
  process.stdout.write(
    `${what}: ${wallS.toFixed(1)} s wall${cpuS === null ? '' : `, ${cpuS.toFixed(1)} s CPU`} (load ${load}), exit ${r.status}; the docs: ${claim || '–'}\n`,
  );
  return { ...r, row };
}

const machine = describeMachine();
const startLoad = loadavg().map((x) => Math.round(x * 100) / 100);
process.stdout.write(
  `first hour on ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load ${startLoad.join(' ')}\n`,
);

const root = mkdtempSync(join(tmpdir(), 'metabench-first-hour-'));
const clone = join(root, 'metabench');
const head = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {
  cwd: REPO,
  encoding: 'utf8',
}).stdout.trim();
const cloned = spawnSync('git', ['clone', '--quiet', REPO, clone], { encoding: 'utf8' });
if (cloned.status !== 0) {
  process.stderr.write(`git clone failed: ${cloned.stderr}\n`);
  process.exit(1);
}
const { commands, saves } = firstHour(clone);

// The README's install line (its comment: "the dependencies, and builds dist/ once"). `npm ci`
// is what CI and a careful user run; both build dist/ through `prepare`.
const readme = readFileSync(join(clone, 'README.md'), 'utf8');
const installLine = readme.split('\n').find((l) => /^npm (install|ci)\b/.test(l)) ?? '';
const install = timed(
  'install (npm ci)',
  clone,
  ['npm', 'ci', '--no-audit', '--no-fund', '--prefer-offline'],
  words(installLine).comment,
);
if (install.status !== 0) {
  process.stderr.write(`npm ci failed:\n${install.stderr.slice(-4000)}\n`);
  process.exit(1);
}
const main = join(clone, 'dist/orchestrator/cli/main.js');
const builtAt = statSync(main).mtimeMs;

// The commands read paths relative to the clone (experiments/, test/fixtures/); the guide's
// saved sweep goes where it says.
saveFiles(clone, saves);
const npxCache = join(root, 'npx-cache');
mkdirSync(npxCache);
for (const c of commands) {
  const lab = !simulated(c);
  const args = lab && !LAB ? [...c.args, '--dry-run'] : [...c.args];
  const r = timed(
    `${c.where}${lab && !LAB ? ' (dry run)' : ''}`,
    clone,
    ['npx', '--offline', 'metabench', ...args],
    c.comment,
    { npm_config_cache: npxCache, npm_config_update_notifier: 'false' },
  );
  const est = lab && !LAB ? estimateS(r.stdout) : undefined;
  const claim = claimedS(c.comment);
  if (est !== undefined)
    r.row.note = `dry run estimates ${est.toFixed(0)} s${claim ? ` (${((est / claim) * 100).toFixed(0)}% of the claimed ${claim} s)` : ''}`;
  if (r.status !== 0) r.row.note = `${r.row.note} ${r.stderr.trim().split('\n').slice(-2).join(' ')}`.trim();
}
const rebuilt = statSync(main).mtimeMs !== builtAt;
process.stdout.write(`dist/ rebuilt by a metabench command: ${rebuilt ? 'YES' : 'no'}\n`);

const date = new Date().toISOString().slice(0, 10);
const cell = (s: string) => s.replace(/\|/g, '\\|');
const md = [
  `# The first hour, timed (${date})`,
  '',
  `A fresh clone of ${head} (\`git clone\`, \`npm ci\`), then every command of the README's first screen and of docs/guide.md as the docs give them, through \`npx\` with an empty npx cache (\`npm run bench:first-hour${LAB ? ' -- --lab' : ''}\`, benchmarks/firstHour.ts).${LAB ? '' : ' Lab commands ran with --dry-run: their wall time is the dry run\u2019s, and the estimate it printed is in the notes.'}`,
  '',
  `Machine: ${machine.cpuModel}, ${machine.cpus} cores, ${(machine.memoryBytes / 2 ** 30).toFixed(1)} GiB, ${machine.os}, Node ${machine.node}; load average ${startLoad.join(', ')} at the start (1, 5, 15 min), ${loadavg()
    .map((x) => x.toFixed(2))
    .join(
      ', ',
    )} at the end. CPU time is the command's and its children's (/usr/bin/time)${TIME ? '' : ': not available here'}.`,
  '',
  '| step | command | the docs claim | wall (s) | CPU (s) | load at start | exit | note |',
  '|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${cell(r.what)} | \`${cell(r.command)}\` | ${cell(r.claim) || '–'} | ${r.wallS.toFixed(1)} | ${r.cpuS?.toFixed(1) ?? '–'} | ${r.load1} | ${r.code} | ${cell(r.note) || ''} |`,
  ),
  '',
  `dist/ rebuilt by a metabench command after the install: ${rebuilt ? '**yes**' : 'no'}.`,
  '',
].join('\n');
mkdirSync(RESULTS, { recursive: true });
const file = join(RESULTS, `first-hour-${date}.md`);
writeFileSync(file, md);
process.stdout.write(`wrote ${file}\n`);
if (KEEP) process.stdout.write(`the clone: ${clone}\n`);
else rmSync(root, { recursive: true, force: true });
