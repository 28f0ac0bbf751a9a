import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunSummary } from '../analysis/summary.js';
import { manifest, results, runData, summary } from '../../test/helpers/reportData.js';
import { renderMarkdown } from './markdown.js';
import { interruptedAtS, rerunCommand } from './headline.js';
import type { MachineState } from './remedies.js';
import type { RunData } from './load.js';

const machine: MachineState = {
  cores: 2,
  start: { atS: 0, load1: 1.1, load5: 0.9, stealPct: 0, busy: ['chromium'] },
  phases: {
    baseline: { atS: 4, load1: 3.6, load5: 1.7, stealPct: 0, busy: ['chromium', 'tsc', 'node'] },
  },
};

function invalidLag(over: Partial<RunSummary> = {}): Partial<RunSummary> {
  const v = summary().validity;
  const lag = {
    check: 'lag' as const,
    what: 'schedule lag p99 of first attempts, ms',
    value: 37.2,
    limit: 10,
  };
  return {
    validity: {
      ...v,
      valid: false,
      checks: v.checks.map((c) => (c.check === 'lag' ? { ...lag, ok: false } : c)),
      failed: [lag],
    },
    outcome: 'invalid',
    outcomeReason: 'invalid run',
    recovered: false,
    recoveryTimeS: null,
    metastable: null,
    ...over,
  };
}

/** A run of the lab on a busy machine, unpinned, run as `metabench run … --scale 0.2 --out x`. */
function labRun(over: Partial<RunSummary> = {}, withMachine = true): RunData {
  const r = runData(1, undefined, {
    ...invalidLag(over),
    ...(withMachine ? ({ machine } as Partial<RunSummary>) : {}),
  });
  return {
    ...r,
    manifest: {
      ...manifest,
      command: ['run', 'experiments/retry-storm.yaml', '--scale', '0.2', '--out', 'results/x'],
      pinning: { applied: false, reason: 'fewer than 4 CPUs without --pin' },
    } as typeof manifest,
  };
}

/** The report's lines before its header table. */
function lead(md: string): string {
  return md.slice(md.indexOf('\n') + 1, md.indexOf('| | |'));
}

test('an invalid run’s report opens with the failed check, its value and limit, the machine’s load, then the remedies in order', () => {
  const top = lead(renderMarkdown(results([labRun()])));
  const at = (re: RegExp): number => {
    const m = re.exec(top);
    assert.ok(m, `${re} in:\n${top}`);
    return m.index;
  };
  const order = [
    at(/Invalid run: no verdict is given/),
    at(/- schedule lag p99 of first attempts, ms: 37\.2 \(limit 10\)/),
    at(
      /Machine load: load 3\.6 \(1-minute average; 5-minute 1\.7\) on 2 cores at its highest, in the baseline/,
    ),
    at(/What to do, in this order:/),
    at(/1\. Close the busy programs \(chromium, tsc, node\)/),
    at(/2\. Re-run it: `metabench run experiments\/retry-storm\.yaml --scale 0\.2`\./),
    at(/3\. Add `--pin`/),
    at(/4\. Add `--wait-for-quiet`/),
    at(/5\. `--twin` adds the simulation's verdict/),
    at(/6\. Last, raise the limit in the file's `validity:` section \(`validity\.lagP99`\)/),
  ];
  assert.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
  );
  // The re-run writes a new folder: the recorded --out is dropped.
  assert.doesNotMatch(top, /--out/);
});

test('an older folder (or the simulation) without the machine’s state says the load was not recorded', () => {
  const top = lead(renderMarkdown(results([labRun({}, false)])));
  assert.match(top, /Machine load: machine load not recorded\./);
  assert.doesNotMatch(top, /Close the busy programs/);
});

test('a folder with a twin quotes the simulation’s verdict among the remedies', () => {
  const twin = results([runData(1)]);
  const top = lead(renderMarkdown(results([labRun()], { twin })));
  assert.match(top, /The simulation of the same file \(`twin\/`\) gives \*\*metastable\*\*/);
});

test('a valid run has no remedies in its lead', () => {
  const top = lead(renderMarkdown(results([runData(1)])));
  assert.doesNotMatch(top, /What to do|Machine load/);
});

test('an interrupted run leads with its interruption, not with the checks it failed by stopping early', () => {
  const r = labRun({
    warnings: [
      'invalid run: schedule lag p99 of first attempts, ms: 37.2 (limit 10)',
      'the run was interrupted at 28 s, before its schedule ended; figures cover only the seconds observed',
    ],
    usable: false,
  });
  const top = lead(renderMarkdown(results([r])));
  assert.match(
    top,
    /^\s*\*\*Interrupted at 28 s\*\*, before its schedule ended: no verdict is given; the 1 validity check below failed because the run stopped early/,
  );
  assert.match(top, /1\. Run it again to the end of its schedule/);
  assert.match(top, /`metabench lab reset`/);
  assert.doesNotMatch(top, /validity\.lagP99|--pin/);
});

test('several runs: each invalid run’s load, then the remedies for the checks any of them failed', () => {
  const runs = [runData(1), { ...labRun(), index: 2 }];
  const top = lead(renderMarkdown(results(runs)));
  assert.match(
    top,
    /- run 2: \*\*invalid\*\*, no verdict: schedule lag p99 of first attempts, ms: 37\.2 \(limit 10\)/,
  );
  assert.match(top, /- run 2, machine load: load 3\.6/);
  assert.match(top, /What to do, in this order:/);
});

test('interruptedAtS reads the interruption from the summary’s warning; rerunCommand drops --out and quotes what needs it', () => {
  assert.equal(interruptedAtS({ warnings: ['the run was interrupted at 28.5 s, before …'] }), 28.5);
  assert.equal(interruptedAtS({ warnings: ['no steady-state hypothesis declared'] }), null);
  assert.equal(
    rerunCommand({ scale: 1, command: ['run', 'my exp.yaml', '--out=x', '--set', 'load.rate=40/s'] }),
    "metabench run 'my exp.yaml' --set load.rate=40/s",
  );
  assert.equal(rerunCommand({ scale: 0.2, experimentFile: 'e.yaml' }), 'metabench run e.yaml --scale 0.2');
  assert.match(
    rerunCommand({ scale: 1, sweep: { file: 's.yaml', point: 3 } }),
    /^metabench sweep s\.yaml --resume DIR --rerun-invalid \(DIR: the sweep's folder, which holds point-3\/\)$/,
  );
});
