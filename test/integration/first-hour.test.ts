import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'csv-parse/sync';
import { CLI, REPO, tempDir } from '../helpers/cli.js';
import { freshStateDir } from '../helpers/state.js';
import {
  claimedS,
  claimPattern,
  estimateS,
  firstHour,
  normalLine,
  simulated,
  userFolder,
} from '../../benchmarks/firstHourDocs.js';

// Issue 33's acceptance: the README's first screen and the guide, run as a new user runs
// them. The commands, the files the guide asks to save and the output they claim are read
// from the docs themselves (a changed doc is what is tested):
// - every `npx metabench …` line of a ```sh block of the README's "## Start" section and of
//   docs/guide.md;
// - a simulated command (`--runtime sim`) runs for real, in a temporary folder holding a
//   copy of experiments/ and test/fixtures/sweeps/ (its results/ lands there), and every
//   line of the ```text block that follows its ```sh block ("…" elides text) must be a line
//   it printed or a line of the report.md or sweep.md it wrote;
// - a lab command runs with --dry-run (a lab run takes minutes): the file and the scale are
//   accepted, the plan is printed, and its wall-time estimate lies within MARGIN of the
//   time claimed in the command's comment ("# …: about 2 min"). The estimate is computed
//   from the schedule, not measured: no wall clock is asserted. Measured wall times are
//   benchmarks/firstHour.ts's to print.
// - a ```yaml block after "Save this as `PATH`" is saved there before the commands run.

/** The estimate leaves out the lab's start-up and the report (about 20 s a run, measured). */
const MARGIN = { below: 0.3, above: 0.1 };

const { commands, saves, readmeStart: firstScreen } = firstHour(REPO);

function metabench(
  cwd: string,
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd,
      env: { ...process.env, METABENCH_STATE_DIR: freshStateDir() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('the docs give the first hour: the README’s two commands and the guide’s', () => {
  assert.ok(commands.filter((c) => c.where.startsWith('README')).length >= 2, 'the README’s two commands');
  assert.ok(commands.some(simulated), 'a simulated command');
  assert.ok(
    commands.some((c) => !simulated(c)),
    'a lab command',
  );
  for (const c of commands.filter((x) => !simulated(x)))
    assert.notEqual(
      claimedS(c.comment),
      undefined,
      `${c.where}: a lab command says how long it takes ("# …: about N min")`,
    );
  assert.match(claimPattern('a … b').source, /^a \.\*\? b$/);
  assert.equal(
    estimateS('  wall time: ≈ 97.7s per run (schedule and drain, plus lab start-up) × 3 = ≈ 293.1s'),
    293.1,
  );
  assert.equal(estimateS('  wall time: ≈ 1163 s (plus lab start-up per run)'), 1163);
  assert.equal(claimedS('12 lab runs of about 2 min: about 24 min'), 1440);
  assert.equal(claimedS('simulated: about 11 s of CPU'), 11);
});

test('every lab command of the first hour is accepted, and its dry run’s estimate is the time the docs claim', async () => {
  const dir = userFolder(REPO, tempDir('first-hour'), saves);
  for (const c of commands.filter((x) => !simulated(x))) {
    const r = await metabench(dir, [...c.args, '--dry-run']);
    assert.equal(r.code, 0, `${c.where}: metabench ${c.args.join(' ')} --dry-run\n${r.stderr}`);
    assert.match(r.stdout, /plan of run|points ×|step test on/, `${c.where}: the plan is printed`);
    const est = estimateS(r.stdout);
    const claim = claimedS(c.comment)!;
    assert.ok(est !== undefined, `${c.where}: the dry run prints its wall time\n${r.stdout}`);
    assert.ok(
      est >= claim * (1 - MARGIN.below) && est <= claim * (1 + MARGIN.above),
      `${c.where}: the docs claim about ${claim} s; the dry run estimates ${est} s (accepted: ${claim * (1 - MARGIN.below)} to ${claim * (1 + MARGIN.above)} s)`,
    );
  }
});

test('every simulated command of the first hour runs and prints, or writes, the lines the docs show', async () => {
  const dir = userFolder(REPO, tempDir('first-hour'), saves);
  for (const c of commands.filter(simulated)) {
    const r = await metabench(dir, c.args);
    assert.equal(r.code, 0, `${c.where}: metabench ${c.args.join(' ')}\n${r.stderr}`);
    const folder = /→ (results\/\S+)/.exec(r.stderr)?.[1];
    assert.ok(
      folder !== undefined && existsSync(join(dir, folder)),
      `${c.where}: names its results folder\n${r.stderr}`,
    );
    const written = ['report.md', 'sweep.md']
      .map((f) => join(dir, folder, f))
      .filter(existsSync)
      .map((f) => readFileSync(f, 'utf8'));
    const lines = [r.stdout, r.stderr, ...written].flatMap((text) => text.split('\n')).map(normalLine);
    for (const claim of c.claims)
      assert.ok(
        lines.some((l) => claimPattern(claim).test(l)),
        `${c.where}: no line printed or in the report matches the docs' "${claim}"`,
      );
    if (c.where.startsWith('README')) readmeClaims(dir, folder);
  }
});

/** The README's first screen describes the simulated run in its prose: each sentence checked here. */
function readmeClaims(dir: string, folder: string): void {
  // "writes `results/<date>-retry-storm-sim-s1/`"
  const named = /`results\/<date>-([\w.-]+-sim-[\w.-]+)\/`/.exec(firstScreen)?.[1];
  assert.ok(named, 'the README names the simulated run’s folder');
  assert.match(folder, new RegExp(`^results/\\d{4}-\\d{2}-\\d{2}-${named.replace(/\./g, '\\.')}$`));
  // report.md's first line: "for the simulated run `**Outcome: metastable.** …`"
  const outcome = /for the simulated run `([^`]+)`/.exec(firstScreen.replace(/\n\s*/g, ' '))?.[1];
  assert.ok(outcome, 'the README quotes the simulated run’s outcome line');
  const report = readFileSync(join(dir, folder, 'report.md'), 'utf8').split('\n');
  const first = report.find((l) => l.startsWith('**Outcome:')) ?? '';
  assert.match(normalLine(first), claimPattern(outcome), 'report.md’s outcome line is the README’s');
  // "in the simulated run goodput falls to 0 at the trigger and stays there while attempts hold at 4× offered"
  const m = /goodput falls to 0 at the trigger and stays there while attempts hold at (\d+)× offered/.exec(
    firstScreen.replace(/\n\s*/g, ' '),
  );
  assert.ok(m, 'the README describes the throughput figure');
  const rows = parse(readFileSync(join(dir, folder, 'data/timeseries.csv')), {
    columns: true,
    cast: true,
  }) as Record<string, number | string>[];
  const after = rows.filter((row) => row['phase'] === 'observe');
  assert.ok(after.length > 60, 'the observation’s seconds');
  assert.deepEqual([...new Set(after.map((row) => Number(row['goodput'])))], [0], 'goodput stays 0');
  const ratio =
    after.reduce((s, row) => s + Number(row['attempts']), 0) /
    after.reduce((s, row) => s + Number(row['offered']), 0);
  assert.ok(Math.abs(ratio - Number(m[1])) < 0.05 * Number(m[1]), `attempts ${ratio.toFixed(2)}× offered`);
}
