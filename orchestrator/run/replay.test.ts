import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerRuntimes } from '../cli/runtimes.js';
import { judgeValidity, validityLimits, type LatenessVerdict } from '../analysis/validity.js';
import { readLateness, REPLAY_DIR, REPLAY_FILE, type ReplayRecord } from '../results/lateness.js';
import type { RunPlan } from '../spec/plan.js';
import { planOfFile } from '../../test/helpers/plan.js';
import { STEADY } from '../../test/helpers/steady.js';
import { seededRng } from '../../foundation/rng.js';
import { arrivalsFor } from './load.js';
import { replayLateness } from './replay.js';
import { StatusLine } from './status.js';

registerRuntimes();

const ctx = {
  journal: { record: () => undefined, clear: () => undefined },
  status: new StatusLine(process.stderr, true),
  stop: new AbortController().signal,
};

/** Each origin's lag as `lagOf(intendedMs, i)` makes it. */
function lagsOf(plan: RunPlan, lagOf: (t: number, i: number) => number): Float32Array {
  const a = arrivalsFor(plan);
  const lags: number[] = [];
  for (let t = a.next(); t !== undefined; t = a.next()) lags.push(lagOf(t, lags.length));
  return Float32Array.from(lags);
}

/** Check 4 of a run of `plan` that recorded `lags` and whose replay said `lateness` (every other check passes). */
function validityOf(plan: RunPlan, lags: Float32Array, lateness: LatenessVerdict) {
  const sorted = Float32Array.from(lags).sort();
  return judgeValidity({
    limits: validityLimits(plan.experiment),
    offered: lags.length,
    recorded: lags.length,
    unsent: 0,
    baselineHypothesis: STEADY,
    triggers: [],
    phases: [],
    lagP99Ms: sorted[Math.ceil(0.99 * sorted.length) - 1]!,
    lagSamples: lags.length,
    lagMaxMs: sorted[sorted.length - 1]!,
    lateness,
    generatorCpu: null,
  });
}

// retry-storm with a pause short enough to recover from (0.4 s at scale 0.2).
const recovering = (): RunPlan =>
  planOfFile('retry-storm', { scale: 0.2, set: ['schedule.trigger.duration=2s'] });

test('a recorded run whose sends bunch into a burst longer than the timeout: the replay changes the outcome and the run is invalid', async () => {
  const plan = recovering();
  // The generator froze for 1.5 s right after the trigger, then sent everything it owed at once.
  const from = plan.phases.trigger.endMs;
  const lags = lagsOf(plan, (t) => (t >= from && t < from + 1500 ? from + 1500 - t : 0));
  const dir = mkdtempSync(join(tmpdir(), 'metabench-replay-'));
  const v = await replayLateness(plan, dir, lags, ctx);
  assert.equal(v.kind, 'replayed');
  const r = v as Extract<LatenessVerdict, { kind: 'replayed' }>;
  assert.equal(r.harmless, false);
  assert.match(
    r.value,
    /lateness changed outcome metastable with the actual send times, recovered with the intended/,
  );
  const validity = validityOf(plan, lags, v);
  assert.equal(validity.valid, false);
  assert.deepEqual(
    validity.failed.map((f) => f.check),
    ['lag'],
  );
  // The record: the lags, both replays as run folders, and the comparison.
  assert.deepEqual([...readLateness(dir)!], [...lags]);
  for (const twin of ['intended', 'actual'])
    assert.ok(existsSync(join(dir, REPLAY_DIR, twin, 'summary.json')), twin);
  const record = JSON.parse(readFileSync(join(dir, REPLAY_DIR, REPLAY_FILE), 'utf8')) as ReplayRecord;
  assert.equal(record.verdict, 'changed');
  assert.equal(record.intended.outcome, 'recovered');
  assert.equal(record.actual.outcome, 'metastable');
  assert.equal(record.recoveryWindowS, 1);
  const actual = JSON.parse(readFileSync(join(dir, REPLAY_DIR, 'actual', 'summary.json'), 'utf8')) as {
    validity: { checks: { check: string; value: unknown }[] };
  };
  assert.equal(
    actual.validity.checks.find((c) => c.check === 'lag')!.value,
    "imposed: the lab run's actual send times (a lateness replay)",
  );
});

test('a late but harmless run: lags of a few ms, p99 above the old 10 ms limit, judged harmless by the replay, and the run valid', async () => {
  const plan = planOfFile('retry-storm', { scale: 0.2 });
  // Most sends within 2 ms, 2% of them 6.5–19.5 ms late: the laptop's 13.1 ms p99.
  const rng = seededRng(3, 'lags');
  const lags = lagsOf(plan, () => (rng.next() < 0.02 ? 6.5 + 13 * rng.next() : 2 * rng.next()));
  const dir = mkdtempSync(join(tmpdir(), 'metabench-replay-'));
  const v = await replayLateness(plan, dir, lags, ctx);
  assert.equal(v.kind, 'replayed');
  assert.match(
    (v as Extract<LatenessVerdict, { kind: 'replayed' }>).value,
    /^replay with the actual send times: metastable, goodput 0\/s.*: lateness harmless$/,
  );
  const validity = validityOf(plan, lags, v);
  assert.ok(validity.checks.find((c) => c.check === 'lag') !== undefined);
  assert.ok(validityOf(plan, lags, v).limits.lagP99Ms < 13, 'the fixed limit would have failed it');
  assert.equal(validity.valid, true, JSON.stringify(validity.failed));
});

test('an experiment the simulation does not model (an LLM lab) is not replayed: the fixed limit applies, and says why', async () => {
  const plan = planOfFile('llm-platform', { scale: 0.2 });
  const dir = mkdtempSync(join(tmpdir(), 'metabench-replay-'));
  const v = await replayLateness(plan, dir, Float32Array.from([13.1]), ctx);
  assert.equal(v.kind, 'unmodelled');
  assert.match(
    (v as Extract<LatenessVerdict, { kind: 'unmodelled' }>).why,
    /^the simulation does not model this experiment \(.*lab\.llm.*LLM provider/,
  );
  assert.equal(existsSync(join(dir, REPLAY_DIR)), false);
  const validity = validityOf(plan, Float32Array.from([13.1]), v);
  const lag = validity.checks.find((c) => c.check === 'lag')!;
  assert.match(
    lag.what,
    /^schedule lag p99 of first attempts, ms \(the fixed limit: the simulation does not model/,
  );
  assert.equal(lag.limit, validity.limits.lagP99Ms);
});

test('a closed-loop load is not replayed (no schedule to be late for): the fixed limit applies, and says why', async () => {
  const plan = planOfFile('closed-loop-pause', { scale: 0.2 });
  const dir = mkdtempSync(join(tmpdir(), 'metabench-replay-'));
  const v = await replayLateness(plan, dir, Float32Array.from([1]), ctx);
  assert.deepEqual(v, {
    kind: 'unmodelled',
    why: 'a closed-loop load has no schedule to be late for: the replay needs an open-loop one',
  });
  assert.equal(existsSync(join(dir, REPLAY_DIR)), false);
});

test('a replay that fails leaves the lab run its figures: the fixed limit applies, naming the failure', async () => {
  const plan = planOfFile('retry-storm', { scale: 0.2 });
  const dir = mkdtempSync(join(tmpdir(), 'metabench-replay-'));
  writeFileSync(join(dir, REPLAY_DIR), 'a file where the replay folder goes');
  const v = await replayLateness(plan, dir, Float32Array.from([1]), ctx);
  assert.equal(v.kind, 'unmodelled');
  assert.match(
    (v as Extract<LatenessVerdict, { kind: 'unmodelled' }>).why,
    /^the lateness replay failed \(.*ENOTDIR/,
  );
});
