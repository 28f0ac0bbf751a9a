import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOf } from '../test/helpers/plan.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';

registerRuntimes();

const sum = (xs: readonly (number | null | undefined)[] | undefined, a = 0, b = Infinity): number =>
  (xs ?? []).slice(a, b).reduce<number>((s, x) => s + (x ?? 0), 0);

/** Three replicas of 4 workers × 10 ms, 150/s round-robin, no retries; `trigger` from 5 s (after 1 s warm-up and 4 s baseline). */
function threeReplicas(trigger: string): string {
  return `name: replicas
lab:
  api: { replicas: 3, workers: 4, work: { dist: exponential, mean: 10ms } }
load: { arrival: poisson, rate: 150/s }
client: { timeout: 1s, retry: { policy: none }, balance: round-robin }
schedule:
  warmup: 1s
  baseline: 4s
  trigger:
${trigger}
  observe: 5s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 3
`;
}

test('three simulated replicas under round-robin: each receives a third, and their series sum to the server columns', async () => {
  const r = await simulate(planOf(threeReplicas('    kind: load-spike\n    factor: 1x\n    duration: 1s')));
  const s = r.server!;
  const x = s.extra!;
  assert.equal(r.lab.apis.length, 3);
  const total = sum(s.received);
  assert.ok(total > 1500, `received ${total}`);
  for (const i of [0, 1, 2]) {
    const own = sum(x[`api${i}_received`]);
    assert.ok(Math.abs(own / total - 1 / 3) < 0.01, `replica ${i} received ${own} of ${total}`);
  }
  // Per bucket, the summed columns are the replicas' sum (the simulation answers every bucket).
  s.received.forEach((v, i) =>
    assert.equal(v, sum([0, 1, 2].map((k) => x[`api${k}_received`]![i])), `bucket ${i}`),
  );
  s.completed.forEach((v, i) =>
    assert.equal(v, sum([0, 1, 2].map((k) => x[`api${k}_completed`]![i])), `bucket ${i}`),
  );
  // Capacity is the sum: 3 × 4 / 10 ms.
  assert.equal(r.summary.capacity.nominalPerS, 1200);
  assert.equal(r.summary.outcomes.ok, r.summary.offered);
});

test('a pause of api[1] stops replica 1’s completions alone; the other two keep completing', async () => {
  const r = await simulate(planOf(threeReplicas('    kind: pause\n    target: api[1]\n    duration: 2s')));
  const x = r.server!.extra!;
  // The pause holds seconds 5 and 6.
  assert.deepEqual(x['api1_completed']!.slice(5, 7), [0, 0]);
  assert.deepEqual(x['api1_received']!.slice(5, 7), [0, 0]);
  for (const i of [0, 2]) {
    const done = x[`api${i}_completed`]!.slice(5, 7);
    assert.ok(
      done.every((v) => v! > 30),
      `replica ${i} completes during the pause: ${done.join(', ')}`,
    );
  }
  // Replica 1 reads what its kernel kept on resume, then serves again.
  assert.ok(x['api1_received']![7]! > 50, `replica 1 on resume: ${x['api1_received']![7]}`);
  assert.ok(sum(x['api1_completed'], 8, 10) > 60);
  assert.equal(r.lab.apis[1]!.proc.state, 'up');
  // Part of its third of the traffic timed out at the client while it was frozen.
  assert.ok(r.summary.outcomes.timeout > 30, JSON.stringify(r.summary.outcomes));
  assert.equal(r.summary.triggers[0]!.target, 'api[1]');
});

test('kill api[0] without restart leaves replicas 1 and 2 serving; kill api takes every replica down', async () => {
  const one = await simulate(
    planOf(threeReplicas('    kind: kill\n    target: api[0]\n    duration: 2s\n    restart: false')),
  );
  assert.deepEqual(
    one.lab.apis.map((a) => a.proc.state),
    ['down', 'up', 'up'],
  );
  const x = one.server!.extra!;
  assert.equal(sum(x['api0_completed'], 6), 0);
  assert.ok(sum(x['api1_completed'], 6) > 100 && sum(x['api2_completed'], 6) > 100);
  const all = await simulate(planOf(threeReplicas('    kind: kill\n    target: api\n    duration: 2s')));
  assert.deepEqual(
    all.lab.apis.map((a) => a.starts),
    [2, 2, 2],
    'each replica killed and started again',
  );
  assert.equal(sum(all.server!.completed, 6, 7), 0);
});
