import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  busyPrograms,
  chooseRemedies,
  describeMachineLoad,
  peakLoad,
  type MachineState,
  type RemedyInput,
} from './remedies.js';

const lag = { check: 'lag', what: 'schedule lag p99 of first attempts, ms', value: 37.2, limit: 10 };
const rate = { check: 'rate', what: 'offered rate in the baseline, /s', value: 250, limit: '280/s ± 5.6/s' };
const baseline = {
  check: 'baseline',
  what: 'the steady-state hypothesis held in the baseline',
  value: 'goodput 0.8 (fail)',
  limit: 'goodput >= 95% offered',
};
const trigger = {
  check: 'trigger',
  what: 'pause api took effect on time and was undone',
  value: 'failed to apply: ESRCH',
  limit: 'within 100 ms',
};

/** A busy 2-core machine: load 3.4 in the trigger, chromium and tsc the busiest other programs. */
const busy: MachineState = {
  cores: 2,
  start: { atS: 0, load1: 1.2, load5: 1.0, stealPct: 0, busy: ['tsc'] },
  phases: {
    warmup: { atS: 2, load1: 1.5, load5: 1.1, stealPct: 0, busy: ['tsc', 'chromium'] },
    baseline: { atS: 4, load1: 2.5, load5: 1.4, stealPct: 0, busy: ['chromium', 'tsc'] },
    trigger: { atS: 6, load1: 3.4, load5: 1.9, stealPct: 1.5, busy: ['chromium', 'node', 'tsc'] },
  },
};
const quiet: MachineState = {
  cores: 2,
  start: { atS: 0, load1: 0.3, load5: 0.2, stealPct: null, busy: ['sshd'] },
  phases: { baseline: { atS: 4, load1: 0.9, load5: 0.4, stealPct: null, busy: ['sshd'] } },
};

function input(over: Partial<RemedyInput> = {}): RemedyInput {
  return {
    failed: [lag],
    machine: busy,
    runtime: 'local',
    pinned: false,
    cores: 2,
    rerun: 'metabench run experiments/retry-storm.yaml --scale 0.2',
    twinVerdict: null,
    triggerErrors: [],
    interrupted: false,
    ...over,
  };
}

const kinds = (x: RemedyInput) => chooseRemedies(x).map((r) => r.kind);

test('a lag failure on a busy, unpinned local machine: close the busy programs, re-run, --pin, --wait-for-quiet, --twin, raise the limit, in that order', () => {
  const rs = chooseRemedies(input());
  assert.deepEqual(
    rs.map((r) => r.kind),
    ['close-busy', 'rerun', 'pin', 'wait-for-quiet', 'twin', 'raise-limit'],
  );
  assert.match(rs[0]!.text, /chromium, node, tsc/);
  assert.match(rs[0]!.text, /2 cores/);
  assert.match(rs[1]!.text, /`metabench run experiments\/retry-storm\.yaml --scale 0\.2`/);
  assert.match(rs[4]!.text, /`--twin`/);
  assert.match(rs[5]!.text, /`validity\.lagP99`/);
  assert.match(rs[5]!.text, /lateness up to that value is then accepted unchecked/);
});

test('close the busy programs only when the load exceeded the cores; --pin only when not pinned, local, with 2 cores or more', () => {
  assert.ok(!kinds(input({ machine: quiet })).includes('close-busy'));
  assert.ok(!kinds(input({ machine: null })).includes('close-busy'));
  assert.ok(!kinds(input({ pinned: true })).includes('pin'));
  assert.ok(!kinds(input({ pinned: null })).includes('pin'));
  assert.ok(!kinds(input({ cores: 1 })).includes('pin'));
  assert.ok(!kinds(input({ runtime: 'docker' })).includes('pin'));
  assert.deepEqual(kinds(input({ machine: quiet, pinned: true })), [
    'rerun',
    'wait-for-quiet',
    'twin',
    'raise-limit',
  ]);
});

test('the chooser keys on the check name, not its wording: a reworded lag check gets the same remedies', () => {
  const replay = {
    check: 'lag',
    what: 'the twin replayed with the actual send times gave another outcome',
    value: 'recovered vs metastable',
    limit: 'the same outcome class',
  };
  assert.deepEqual(kinds(input({ failed: [replay] })), kinds(input()));
});

test('an existing twin is quoted with its verdict instead of suggesting --twin', () => {
  const twin = chooseRemedies(input({ twinVerdict: 'metastable' })).find((r) => r.kind === 'twin')!;
  assert.match(twin.text, /\(`twin\/`\) gives \*\*metastable\*\*/);
  assert.doesNotMatch(twin.text, /--twin/);
});

test('rate and CPU failures name their own validity fields; two generator checks, one list', () => {
  const rs = chooseRemedies(input({ failed: [lag, rate, { ...lag, check: 'cpu' }] }));
  assert.equal(rs.filter((r) => r.kind === 'raise-limit').length, 1);
  const raise = rs.find((r) => r.kind === 'raise-limit')!.text;
  assert.match(raise, /`validity\.lagP99`, `validity\.rateTolerance`, `validity\.generatorCpu`/);
});

test('a baseline failure: the load against the hypothesis, the warm-up, the capacity; loosening the hypothesis last', () => {
  const rs = chooseRemedies(input({ failed: [baseline], machine: quiet }));
  assert.deepEqual(
    rs.map((r) => r.kind),
    ['rerun', 'lower-load', 'warm-up', 'twin', 'loosen-hypothesis'],
  );
  assert.match(rs[1]!.text, /`load\.rate`/);
  assert.match(rs[1]!.text, /metabench calibrate/);
  assert.match(rs[2]!.text, /`schedule\.warmup`/);
  assert.ok(!rs.some((r) => r.kind === 'raise-limit' || r.kind === 'pin'));
  // On a busy machine, closing the busy programs comes first.
  assert.equal(kinds(input({ failed: [baseline] }))[0], 'close-busy');
});

test('a trigger failure: the trigger’s error, then metabench lab reset, then re-run', () => {
  const rs = chooseRemedies(
    input({ failed: [trigger], machine: quiet, triggerErrors: ['pause api failed to apply: ESRCH'] }),
  );
  assert.deepEqual(
    rs.map((r) => r.kind),
    ['trigger-error', 'lab-reset', 'rerun'],
  );
  assert.match(rs[0]!.text, /ESRCH/);
  assert.match(rs[1]!.text, /`metabench lab reset`/);
});

test('the simulation: no machine, pinning or twin remedies; another seed instead of a re-run', () => {
  const rs = chooseRemedies(input({ runtime: 'sim', machine: null, pinned: null }));
  assert.deepEqual(
    rs.map((r) => r.kind),
    ['seed', 'raise-limit'],
  );
  assert.match(rs[0]!.text, /deterministic/);
});

test('an interrupted run: run it again, and lab reset in case it was forced; nothing about the checks it failed by stopping', () => {
  assert.deepEqual(kinds(input({ interrupted: true, failed: [lag, rate] })), ['rerun', 'lab-reset']);
});

test('the machine’s load: its peak sample and where, the busiest other programs; not recorded said so', () => {
  assert.deepEqual(peakLoad(busy).where, 'in the trigger');
  const late = { ...busy, phases: { ...busy.phases, observe: { ...busy.phases.trigger!, load1: 9 } } };
  assert.equal(peakLoad(late).where, 'in the observation', 'a phase in words, not its key');
  assert.deepEqual(busyPrograms(busy), ['chromium', 'node', 'tsc']);
  assert.deepEqual(busyPrograms({ ...busy, phases: { warmup: busy.phases.warmup! } }), ['tsc', 'chromium']);
  const d = describeMachineLoad(busy);
  assert.match(d, /^load 3\.4 \(1-minute average; 5-minute 1\.9\) on 2 cores at its highest, in the trigger/);
  assert.match(d, /steal 1\.5%/);
  assert.match(d, /busiest other programs: chromium, node, tsc/);
  assert.match(d, /more runnable work than cores/);
  assert.equal(describeMachineLoad(null), 'machine load not recorded');
  assert.doesNotMatch(describeMachineLoad(quiet), /more runnable work|steal/);
});
