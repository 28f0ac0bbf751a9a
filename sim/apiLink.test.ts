import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOf } from '../test/helpers/plan.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';

registerRuntimes();

const sum = (xs: readonly (number | null | undefined)[] | undefined): number =>
  (xs ?? []).reduce<number>((s, x) => s + (x ?? 0), 0);

/** Two replicas of 4 workers × 10 ms, 100/s round-robin, no retries; `trigger` over seconds 5 and 6. */
function twoReplicas(trigger: string): string {
  return `name: api-link
lab:
  api: { replicas: 2, workers: 4, work: { dist: exponential, mean: 10ms } }
load: { arrival: constant, rate: 100/s }
client: { timeout: 1s, retry: { policy: none }, balance: round-robin }
schedule:
  warmup: 1s
  baseline: 4s
  trigger: { ${trigger}, duration: 2s }
  observe: 5s
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 3
`;
}

test('loss of every request on link api[1]: replica 1 receives nothing while its clients time out; replica 0 is untouched', async () => {
  const r = await simulate(
    planOf(twoReplicas("kind: loss, link: 'api[1]', stream: upstream, probability: 100%")),
  );
  const x = r.server!.extra!;
  assert.deepEqual(x['api1_received']!.slice(5, 7), [0, 0], 'the requests never crossed the link');
  for (const v of x['api0_received']!.slice(5, 7))
    assert.ok(v !== null && v >= 45 && v <= 55, `replica 0 received ${v}/s`);
  // Half the 200 origins of the window went to replica 1 and were lost on the way: those of
  // its first second timed out at 1 s; those of its last were still stalled when the toxic
  // went, and removing it closed their connections (a reset), as the fault proxy does.
  assert.equal(r.summary.outcomes.timeout, 50);
  assert.equal(r.summary.outcomes['conn-reset'], 50);
  assert.equal(r.summary.outcomes.ok, r.summary.offered - 100);
});

test('latency 2 s on link api (replies): the api receives and completes every request, and its clients, timing out at 1 s, see none', async () => {
  const r = await simulate(planOf(twoReplicas('kind: latency, link: api, latency: 2s')));
  const s = r.server!;
  // The server's own counts: every request of the window arrived and was answered at once.
  assert.equal(sum(s.received.slice(5, 7)), 200);
  assert.equal(sum(s.completed.slice(5, 7)), 200);
  // The client's: the replies were held on the link past its timeout.
  assert.equal(r.summary.outcomes.timeout, 200);
});

test('partition of link api: new connections are refused; afterwards the clients connect again', async () => {
  const r = await simulate(planOf(twoReplicas('kind: partition, link: api')));
  assert.equal(r.summary.outcomes['conn-refused'], 200);
  assert.equal(sum(r.server!.received.slice(5, 7)), 0);
  // The one in flight as the link went down was reset; every other origin succeeded.
  assert.equal(r.summary.outcomes['conn-reset'], 1);
  assert.equal(r.summary.outcomes.ok, r.summary.offered - 201);
});
