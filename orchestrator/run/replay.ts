import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RunSummary } from '../analysis/summary.js';
import { compareReplays, latenessVerdict, type ReplayFigures } from '../analysis/lateness.js';
import { describeFailed, type LatenessVerdict } from '../analysis/validity.js';
import { refuseOn, runtimePlugin } from '../lab/RuntimePlugin.js';
import { writeJson } from '../results/files.js';
import type { RunPlan } from '../spec/plan.js';
import { round } from '../../foundation/round.js';
import { runOnce, type RunContext } from './runOnce.js';
import { REPLAY_DIR, REPLAY_FILE, writeLateness, type ReplayRecord } from '../results/lateness.js';
import { StatusLine } from './status.js';

/**
 * The lateness replay (DESIGN.md §2, validity check 4): the lab run's twin simulated
 * twice on the same plan (seed, scale, the capacity the lab ran at), once with the
 * intended send times and once with each origin's first attempt sent as late as the
 * lab's generator sent it, each attempt drawing the same work in both (keyed draws,
 * sim/keyedRng.ts). Both are ordinary simulated run folders:
 *   run-<i>/replay/intended/, run-<i>/replay/actual/   (event log: failures only)
 *   run-<i>/replay/lateness.json                        (the comparison, results/lateness.ts)
 * Where the simulation does not model the experiment the replay does not run, and the
 * verdict says why (the fixed lag limit then applies).
 */

/** Why the lab run's lateness cannot be replayed in the simulation, or null when it can. */
export function unreplayable(plan: RunPlan): string | null {
  if (plan.load.arrival.kind === 'closed')
    return 'a closed-loop load has no schedule to be late for: the replay needs an open-loop one';
  try {
    refuseOn(runtimePlugin('sim'), plan.experiment, plan.sourceFile);
  } catch (err) {
    return `the simulation does not model this experiment (${(err as Error).message.replace(/\s+/g, ' ')})`;
  }
  return null;
}

/**
 * Replays `lags` (the lab's per-origin schedule lag, by origin id) in the simulation and
 * returns check 4's verdict. `runDir` is the lab run's folder; the lags are written there
 * first (lateness.bin.gz, orchestrator/results/lateness.ts).
 */
export async function replayLateness(
  plan: RunPlan,
  runDir: string,
  lags: Float32Array,
  ctx: Pick<RunContext, 'journal' | 'status' | 'stop'>,
): Promise<LatenessVerdict> {
  // The record first: the replay is a function of it (and can be run again from it).
  writeLateness(runDir, lags);
  const why = unreplayable(plan);
  if (why !== null) {
    ctx.status.say(`  lateness not replayed: ${why}; the fixed lag limit applies`);
    return { kind: 'unmodelled', why };
  }
  const dir = join(runDir, REPLAY_DIR);
  const quiet = new StatusLine(process.stderr, true);
  const twin = (name: string, sendDelays?: Float32Array): Promise<RunSummary> =>
    runOnce(plan, join(dir, name), {
      journal: ctx.journal,
      status: quiet,
      stop: ctx.stop,
      runtime: 'sim',
      events: 'failures',
      replay: sendDelays ? { sendDelays } : {},
    });
  ctx.status.say('  replaying the run in the simulation with the intended and the actual send times …');
  const t0 = performance.now();
  let intended: RunSummary;
  let actual: RunSummary;
  try {
    intended = await twin('intended');
    actual = await twin('actual', lags);
  } catch (err) {
    // The lab run keeps what it measured; its lateness is then judged by the fixed limit, saying so.
    const failed = `the lateness replay failed (${(err as Error).message.replace(/\s+/g, ' ')})`;
    ctx.status.say(`  ${failed}; the fixed lag limit applies`);
    return { kind: 'unmodelled', why: failed };
  }
  if (ctx.stop.aborted) return { kind: 'unmodelled', why: 'the lateness replay was interrupted' };
  const tookS = round((performance.now() - t0) / 1000, 3);
  const recoveryWindowS = plan.recovery.windowMs / 1000;
  const replay = compareReplays(figuresOf(intended), figuresOf(actual), { recoveryWindowS });
  const record: ReplayRecord = { ...replay, recoveryWindowS, tookS };
  writeJson(join(dir, REPLAY_FILE), record);
  ctx.status.say(
    `  lateness ${replay.verdict}${replay.differences.length ? `: ${replay.differences.join('; ')}` : ''} (replays took ${tookS} s)`,
  );
  return latenessVerdict(replay);
}

/** What a replay's outcome rests on, from its summary. */
export function figuresOf(s: RunSummary): ReplayFigures {
  const applied = s.trigger.applied !== false;
  return {
    outcome: s.outcome,
    failed: describeFailed(s.validity),
    afterTriggerS: applied ? s.observedAfterS : 0,
    offeredPerS: s.afterTrigger.offeredPerS,
    goodputPerS: s.afterTrigger.goodputPerS,
    amplification: s.afterTrigger.amplification,
    recoveryTimeS: s.recoveryTimeS,
  };
}
