import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { simulate, type Simulated } from '../orchestrator/model/simulate.js';
import { planOf } from '../test/helpers/plan.js';

// The api's client-side query policy (lab.db.timeout, lab.db.retry) in simulation, on
// db-loss.yaml's lab (20% of the queries lost on link postgres for 60 s): seeded runs
// comparing the policy with fewer attempts and with none, bounds from p.

const YAML = readFileSync(new URL('../../experiments/db-loss.yaml', import.meta.url), 'utf8');
const P = 0.2;

async function run(yaml: string): Promise<{ r: Simulated; loss: (col: string) => number; queries: number }> {
  const r = await simulate(planOf(yaml));
  const t = r.summary.trigger!;
  const extra = r.server!.extra!;
  // The loss's steady seconds (one after it began, to its end).
  const loss = (col: string): number =>
    (extra[col] ?? [])
      .slice(Math.ceil(t.startS) + 1, Math.floor(t.endS))
      .reduce<number>((a, v) => a + (v ?? 0), 0);
  return { r, loss, queries: loss('db_queries') };
}

/** The header's miss rate: a key requested λ times a second with TTL T misses λ / (1 + λT) times a second. */
function predictedMissesPerS(): number {
  const keys = 1000;
  const exponent = 0.9;
  const rate = 300;
  const ttlS = 10;
  const w = Array.from({ length: keys }, (_, i) => (i + 1) ** -exponent);
  const z = w.reduce((a, b) => a + b, 0);
  return w.reduce((a, x) => a + (rate * x) / z / (1 + ((rate * x) / z) * ttlS), 0);
}

test("the header's miss rate (56/s) is the one simulated in the baseline", async () => {
  assert.equal(Math.round(predictedMissesPerS()), 56);
  const r = await simulate(planOf(YAML));
  const t = r.summary.trigger!;
  const q = r.server!.extra!['db_queries']!.slice(Math.ceil(t.startS) - 40, Math.floor(t.startS));
  const perS = q.reduce<number>((a, v) => a + (v ?? 0), 0) / q.length;
  assert.ok(Math.abs(perS / predictedMissesPerS() - 1) < 0.05, `${perS.toFixed(1)} misses/s`);
});

test('with the query timeout and 3 attempts the api sends 1 + p + p² attempts per query and p³ of them fail', async () => {
  const { r, loss, queries } = await run(YAML);
  const perQuery = loss('db_attempts') / queries;
  const failed = loss('timed_out') / queries;
  const msg = `${perQuery.toFixed(3)} attempts per query, ${(failed * 100).toFixed(2)}% failed of ${queries}`;
  assert.ok(Math.abs(perQuery - (1 + P + P * P)) < 0.03, msg);
  assert.ok(failed < 3 * P ** 3, msg);
  assert.equal(r.summary.outcome, 'recovered', r.summary.outcomeReason);
});

test('with one attempt the timeout still frees the pool, but a share p of the queries fails', async () => {
  const { loss, queries } = await run(YAML.replace('maxAttempts: 3', 'maxAttempts: 1'));
  const failed = loss('timed_out') / queries;
  const msg = `${(failed * 100).toFixed(2)}% failed of ${queries}, ${loss('db_attempts')} attempts`;
  assert.ok(Math.abs(loss('db_attempts') - queries) <= 5, msg); // a query and its attempt may fall in two seconds
  assert.ok(Math.abs(failed - P) < 0.03, msg);
});

test('without the query timeout each connection stalls at its first lost query: the pool is gone until the loss ends', async () => {
  const yaml = YAML.replace(/\n {4}timeout: 200ms\n {4}retry: \{ maxAttempts: 3 \}/, '');
  assert.notEqual(yaml, YAML);
  const { r, loss } = await run(yaml);
  const t = r.summary.trigger!;
  const busy = r.server!.extra!['db_pool_busy']!;
  // Every connection held by a query that will never be answered, from a few seconds into the loss.
  assert.ok(
    busy.slice(Math.ceil(t.startS) + 5, Math.floor(t.endS) - 1).every((b) => b === 16),
    busy.join(' '),
  );
  // So every miss times out (the cache's hits alone are served), and once the loss is
  // removed its stalled connections are closed and replaced: the run recovers.
  assert.ok(loss('timed_out') > 0.1 * loss('cache_misses'), `${loss('timed_out')} timed out`);
  assert.equal(r.summary.outcome, 'recovered', r.summary.outcomeReason);
});
