import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { Recorder } from '../../bench/record/Recorder.js';
import type { Lab } from '../lab/Lab.js';
import { parseExperiment } from '../spec/load.js';
import { planRun } from '../spec/plan.js';
import { TriggerSchedule } from './triggers.js';

const file = (trigger: string) => `
name: t
lab: { api: { workers: 2, work: { dist: constant, mean: 10ms } } }
load: { rate: 10/s }
client: { timeout: 500ms }
schedule: { warmup: 0s, baseline: 10s, trigger: ${trigger}, observe: 20s }
recovery: { within: 5x, tolerance: 10%, window: 2s, hold: 2s }
`;

/** A lab whose process actions take virtual time: a stop waits 300 ms for the exit, a start 1.8 s for the health check. */
function slowLab(clock: VirtualClock, failApply = false): Lab {
  const wait = (ms: number): Promise<void> => clock.sleepUntil(clock.now() + ms);
  return {
    kill: async () => (failApply ? Promise.reject(new Error('no such process')) : wait(20)),
    stop: () => wait(300),
    start: () => wait(1800),
    pause: async () => undefined,
    resume: async () => undefined,
    startUndoRecipe: () => ({ kind: 'none', what: 'x' }),
    pauseUndoRecipe: () => ({ kind: 'none', what: 'x' }),
  } as unknown as Lab;
}

async function runSchedule(trigger: string, failApply = false) {
  const plan = planRun(parseExperiment(file(trigger), 't.yaml'), { scale: 1, run: 1 });
  const clock = new VirtualClock();
  const said: string[] = [];
  const sched = new TriggerSchedule(
    plan.triggers,
    1,
    slowLab(clock, failApply),
    { record: () => undefined, clear: () => undefined },
    (l) => said.push(l),
  );
  sched.arm(clock, new Recorder({}), () => false);
  await clock.advanceTo(30_000);
  await sched.undoAll(() => clock.now(), undefined).catch(() => undefined);
  return { records: sched.records(true), outcomes: sched.outcomes(), said };
}

test("a stop takes effect when its signal is sent, ends when the start is issued; the restart's time to healthy stands apart", async () => {
  const { records, said } = await runSchedule('{ kind: stop, target: api, duration: 5s }');
  assert.equal(records.length, 1);
  const r = records[0]!;
  // Planned 10–15 s; the 300 ms wait for the exit and the 1.8 s health check are not the trigger's.
  assert.equal(r.startMs, 10_000);
  assert.equal(r.endMs, 15_000);
  assert.equal(r.restartHealthyMs, 1800);
  assert.ok(
    said.some((l) => /restart took 1\.800 s to become healthy/.test(l)),
    said.join('\n'),
  );
});

test('a kill without restart has no restart time; a failed apply is recorded for run validity', async () => {
  const { records } = await runSchedule('{ kind: kill, target: api, restart: false, duration: 5s }');
  assert.equal(records[0]!.restartHealthyMs, undefined);
  assert.equal(records[0]!.endMs, 15_000);
  const failed = await runSchedule('{ kind: kill, target: api, duration: 5s }', true);
  assert.equal(failed.outcomes[0]!.applyError, 'no such process');
  assert.equal(failed.outcomes[0]!.plannedStartMs, 10_000);
});
