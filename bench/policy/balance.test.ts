import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { seededRng } from '../../foundation/rng.js';
import { flatArrivals } from '../../test/helpers/arrivals.js';
import { ScriptedDispatch } from '../../test/helpers/dispatchFake.js';
import { drive } from '../driver.js';
import type { Attempt, OutcomeKind } from '../outcome.js';
import { Recorder } from '../record/Recorder.js';
import { balance, BALANCE_POLICIES, Balancer, LEAST_LATENCY_ALPHA, type BalancePolicy } from './balance.js';
import { stack, policyEnv } from './ClientPolicy.js';
import type { ClientPolicy } from './ClientPolicy.js';
import { hedge } from './hedge.js';
import { observe } from './observe.js';
import { retry } from './retry.js';
import { attemptTimeout } from './timeout.js';

interface Scenario {
  readonly replicas: number;
  /** Each attempt's time on the service, by the replica it went to. */
  readonly latencyMs: (replica: number, a: Attempt) => number;
  readonly kind?: (replica: number) => OutcomeKind;
  readonly ratePerS: number;
  readonly durationMs: number;
  readonly retry?: { readonly maxAttempts: number; readonly otherReplica: boolean };
  readonly hedgeMs?: number;
  readonly seed?: number;
}

/**
 * Drives an open-loop constant load through retry / hedge → balance → observe → timeout
 * (the registry's order) over a scripted service in virtual time, and returns what the
 * service saw and what the event log says.
 */
async function run(policy: BalancePolicy, s: Scenario) {
  const clock = new VirtualClock();
  const transport = new ScriptedDispatch(
    clock,
    (a) => s.latencyMs(a.replica ?? 0, a),
    (a) => s.kind?.(a.replica ?? 0) ?? 'ok',
  );
  const lines: Record<string, unknown>[] = [];
  const recorder = new Recorder(
    {
      policies: {
        clients: 1,
        budget: false,
        breaker: false,
        throttle: false,
        hedge: s.hedgeMs !== undefined,
        abandon: false,
      },
    },
    { write: (e) => lines.push(e as Record<string, unknown>), close: async () => {} },
  );
  let balancer: Balancer | undefined;
  const policies: ClientPolicy[] = [
    ...(s.retry ? [retry(s.retry)] : []),
    ...(s.hedgeMs !== undefined ? [hedge({ delayMs: s.hedgeMs })] : []),
    balance({ policy, replicas: s.replicas }, (b) => (balancer = b)),
    observe(recorder),
    attemptTimeout(1000),
  ];
  const env = policyEnv(clock, seededRng(s.seed ?? 1, 'client'), { emit: (e) => recorder.policy(e) });
  const dispatch = stack(policies, transport.dispatch, env);
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', s.ratePerS, 0, s.durationMs),
    dispatch,
    recorder,
    deadlineMs: Infinity,
    drainMs: 10_000,
  });
  await clock.runUntilIdle(s.durationMs + 20_000);
  await done;
  const perReplica = new Array<number>(s.replicas).fill(0);
  for (const a of transport.sent) perReplica[a.replica!]!++;
  return { transport, lines, perReplica, recorded: recorder.close(), balancer: balancer! };
}

const share = (counts: readonly number[], i: number): number =>
  counts[i]! / counts.reduce((a, b) => a + b, 0);

const fast = (): number => 10;

test('round-robin: each replica in turn, exactly n/N attempts each', async () => {
  const r = await run('round-robin', { replicas: 3, latencyMs: fast, ratePerS: 300, durationMs: 10_000 });
  assert.deepEqual(r.perReplica, [1000, 1000, 1000]);
  assert.deepEqual(
    r.transport.sent.slice(0, 7).map((a) => a.replica),
    [0, 1, 2, 0, 1, 2, 0],
  );
});

test('random: each replica gets its share within a binomial bound, and the draws are seeded', async () => {
  const n = 4;
  const total = 8000;
  const a = await run('random', { replicas: n, latencyMs: fast, ratePerS: 800, durationMs: 10_000 });
  // Binomial(8000, 1/4): sd = sqrt(8000 · 1/4 · 3/4) ≈ 38.7; 4.5 sd ≈ 174 (a false alarm about once in 10^5).
  const sd = Math.sqrt(total * (1 / n) * (1 - 1 / n));
  for (const c of a.perReplica) assert.ok(Math.abs(c - total / n) < 4.5 * sd, `${a.perReplica.join(' ')}`);
  // Not a rotation in disguise: some attempt goes where the one before it went.
  const seq = a.transport.sent.map((x) => x.replica);
  assert.ok(seq.some((x, i) => i > 0 && x === seq[i - 1]));
  // Seeded through the PolicyEnv's rng: the same seed, the same choices; another, others.
  const again = await run('random', { replicas: n, latencyMs: fast, ratePerS: 800, durationMs: 10_000 });
  assert.deepEqual(
    again.transport.sent.map((x) => x.replica),
    seq,
  );
  const other = await run('random', {
    replicas: n,
    latencyMs: fast,
    ratePerS: 800,
    durationMs: 10_000,
    seed: 2,
  });
  assert.notDeepEqual(
    other.transport.sent.map((x) => x.replica),
    seq,
  );
});

test('every policy but least-latency spreads attempts evenly over equal replicas', async () => {
  for (const policy of BALANCE_POLICIES.filter((p) => p !== 'least-latency')) {
    const r = await run(policy, { replicas: 5, latencyMs: fast, ratePerS: 500, durationMs: 10_000 });
    assert.equal(r.transport.sent.length, 5000, policy);
    // 1000 each ± 10% (random's 4.5 sd is ±127; the others are closer).
    for (const c of r.perReplica)
      assert.ok(Math.abs(c - 1000) <= 130, `${policy}: ${r.perReplica.join(' ')}`);
  }
});

test('least-latency sends nearly everything to the replica with the lowest response time', async () => {
  // Equal replicas tie only to the last bit of a float, so its split over them is noise;
  // over replicas that differ it picks the fastest once each has been sampled.
  const r = await run('least-latency', {
    replicas: 3,
    latencyMs: (replica) => [30, 10, 20][replica]!,
    ratePerS: 300,
    durationMs: 10_000,
  });
  assert.ok(share(r.perReplica, 1) > 0.99, r.perReplica.join(' '));
  assert.ok(r.perReplica[0]! > 0 && r.perReplica[2]! > 0, 'each replica was sampled');
});

test('least-outstanding and p2c avoid a replica that holds its attempts longer; round-robin does not', async () => {
  // Replica 1 takes 300 ms, the others 10 ms, at 300 attempts/s over 3 replicas: under
  // round-robin replica 1 holds ~30 attempts at once, the others ~1.
  const slow = (replica: number): number => (replica === 1 ? 300 : 10);
  const scenario = { replicas: 3, latencyMs: slow, ratePerS: 300, durationMs: 10_000 };
  const rr = await run('round-robin', scenario);
  const lo = await run('least-outstanding', scenario);
  const p2c = await run('p2c', scenario);
  assert.equal(share(rr.perReplica, 1), 1 / 3);
  assert.ok(share(lo.perReplica, 1) < 0.05, `least-outstanding: ${lo.perReplica.join(' ')}`);
  assert.ok(share(p2c.perReplica, 1) < 0.1, `p2c: ${p2c.perReplica.join(' ')}`);
  // What the client sees: the mean response time falls with the slow replica's share.
  const meanMs = (x: typeof rr): number => x.recorded.overall.response.mean ?? Number.NaN;
  assert.ok(
    meanMs(lo) < meanMs(rr) / 3 && meanMs(p2c) < meanMs(rr) / 3,
    `${meanMs(rr)} ${meanMs(lo)} ${meanMs(p2c)}`,
  );
  // Every attempt ended: nothing stays counted as outstanding.
  for (const x of [lo, p2c]) assert.deepEqual([...x.balancer.outstanding], [0, 0, 0]);
});

test('least-latency herds onto a replica that fails fast (the known pathology); p2c herds less', async () => {
  // Replica 2 answers 503 in 1 ms (it has lost its database), the others serve in 20 ms.
  const scenario = {
    replicas: 3,
    latencyMs: (replica: number): number => (replica === 2 ? 1 : 20),
    kind: (replica: number): OutcomeKind => (replica === 2 ? 'http-5xx' : 'ok'),
    ratePerS: 300,
    durationMs: 10_000,
  };
  const ll = await run('least-latency', scenario);
  const p2c = await run('p2c', scenario);
  const rr = await run('round-robin', scenario);
  // The failing replica looks fastest, so least-latency sends it nearly everything, and
  // the healthy ones, never sampled again, keep their old (slow-looking) EWMA.
  assert.ok(share(ll.perReplica, 2) > 0.99, `least-latency: ${ll.perReplica.join(' ')}`);
  assert.ok(ll.balancer.ewmaMs[2]! < 2 && ll.balancer.ewmaMs[0]! >= 20);
  const failed = (x: typeof ll): number => x.recorded.totals.outcomes['http-5xx'] / x.recorded.totals.offered;
  assert.ok(failed(ll) > 0.99);
  // p2c also favours the replica that empties fastest, but only when it is drawn: at most 2/3.
  assert.ok(share(p2c.perReplica, 2) <= 2 / 3 + 0.02, `p2c: ${p2c.perReplica.join(' ')}`);
  assert.ok(share(p2c.perReplica, 2) > share(rr.perReplica, 2));
  assert.equal(failed(rr), 1 / 3);
});

test(`least-latency: an EWMA of response time (alpha ${LEAST_LATENCY_ALPHA}); a replica without a sample is tried first`, () => {
  const b = new Balancer('least-latency', 3, seededRng(1));
  // Nothing known: each replica is tried once, in turn.
  const first: number[] = [];
  for (let k = 0; k < 3; k++) {
    const i = b.pick();
    first.push(i);
    b.started(i);
    b.ended(i, [30, 10, 20][i]!);
  }
  assert.deepEqual([...first].sort(), [0, 1, 2]);
  assert.equal(b.pick(), 1);
  // The newest sample weighs alpha: replica 1 at 10 ms, then 80 ms → 0.3·80 + 0.7·10 = 31 ms.
  b.started(1);
  b.ended(1, 80);
  assert.ok(Math.abs(b.ewmaMs[1]! - (LEAST_LATENCY_ALPHA * 80 + (1 - LEAST_LATENCY_ALPHA) * 10)) < 1e-9);
  assert.equal(b.pick(), 2);
  // A cancelled attempt (NaN) says nothing about the replica.
  b.started(2);
  b.ended(2, Number.NaN);
  assert.equal(b.ewmaMs[2], 20);
});

test('retry.otherReplica: a retry never goes to the replica its try failed on, under every policy', async () => {
  for (const policy of BALANCE_POLICIES)
    for (const replicas of [2, 3]) {
      // Replica 0 fails everything at once; the others serve.
      const r = await run(policy, {
        replicas,
        latencyMs: (replica) => (replica === 0 ? 1 : 10),
        kind: (replica) => (replica === 0 ? 'http-5xx' : 'ok'),
        ratePerS: 200,
        durationMs: 5000,
        retry: { maxAttempts: 3, otherReplica: true },
      });
      const byOrigin = new Map<number, Attempt[]>();
      for (const a of r.transport.sent) byOrigin.set(a.origin.id, [...(byOrigin.get(a.origin.id) ?? []), a]);
      let retries = 0;
      for (const tries of byOrigin.values())
        for (let k = 1; k < tries.length; k++) {
          retries++;
          assert.notEqual(tries[k]!.replica, tries[k - 1]!.replica, `${policy} over ${replicas}`);
        }
      // Replica 0 failed some first tries; each retry went elsewhere and succeeded.
      assert.ok(retries > 0, `${policy} over ${replicas}: no retries`);
      assert.equal(r.recorded.totals.outcomes.ok, r.recorded.totals.offered, `${policy} over ${replicas}`);
    }
});

test('without otherReplica a retry may land on the replica that just failed', async () => {
  const r = await run('random', {
    replicas: 3,
    latencyMs: (replica) => (replica === 0 ? 1 : 10),
    kind: (replica) => (replica === 0 ? 'http-5xx' : 'ok'),
    ratePerS: 200,
    durationMs: 5000,
    retry: { maxAttempts: 3, otherReplica: false },
  });
  const again = r.transport.sent.filter(
    (a) =>
      a.number > 1 &&
      r.transport.sent.some(
        (b) => b.origin === a.origin && b.number === a.number - 1 && b.replica === a.replica,
      ),
  );
  assert.ok(again.length > 0);
  assert.ok(r.recorded.totals.outcomes['http-5xx'] > 0);
});

test('a hedge is balanced anew: least-outstanding sends it to another replica than the attempt it hedges', async () => {
  const r = await run('least-outstanding', {
    replicas: 2,
    latencyMs: (_replica, a) => (a.hedge ? 10 : 100),
    ratePerS: 2,
    durationMs: 5000,
    hedgeMs: 50,
  });
  const hedges = r.transport.sent.filter((a) => a.hedge);
  assert.equal(hedges.length, 10);
  for (const h of hedges) {
    const first = r.transport.sent.find((a) => a.origin === h.origin && a.number === 1)!;
    assert.notEqual(h.replica, first.replica);
  }
});

test('events.ndjson: every attempt line says which replica served it', async () => {
  const r = await run('round-robin', {
    replicas: 3,
    latencyMs: fast,
    kind: (replica) => (replica === 1 ? 'http-5xx' : 'ok'),
    ratePerS: 30,
    durationMs: 1000,
    retry: { maxAttempts: 2, otherReplica: true },
  });
  const attempts = r.lines.filter((l) => l['e'] === 'attempt');
  assert.equal(attempts.length, r.transport.sent.length);
  const key = (origin: unknown, n: unknown): string => `${String(origin)}#${String(n)}`;
  const served = new Map(r.transport.sent.map((a) => [key(a.origin.id, a.number), a.replica]));
  for (const l of attempts) assert.equal(l['replica'], served.get(key(l['origin'], l['n'])));
  assert.deepEqual(new Set(attempts.map((l) => l['replica'])), new Set([0, 1, 2]));
  // The failed tries on replica 1 were retried elsewhere.
  const retriedFrom1 = attempts.filter((l) => l['n'] === 2);
  assert.ok(retriedFrom1.length > 0 && retriedFrom1.every((l) => l['replica'] !== 1));
});
