import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../../foundation/clock.js';
import { flatArrivals } from '../../../test/helpers/arrivals.js';
import { drive } from '../../../bench/driver.js';
import type { Attempt, OutcomeKind } from '../../../bench/outcome.js';
import { Recorder } from '../../../bench/record/Recorder.js';
import { seededRng } from '../../../foundation/rng.js';
import { ScriptedTransport } from '../../../test/helpers/fakeTransport.js';
import { viaTransport } from '../../../bench/policy/ClientPolicy.js';
import { buildClients } from '../../../bench/policy/compose.js';
import { DEADLINE_HEADER } from '../../../bench/policy/deadline.js';
import { observe } from '../../../bench/policy/observe.js';
import { CLIENT_STACK, type ClientModel } from './index.js';

const base: ClientModel = {
  instances: 1,
  replicas: 1,
  timeoutMs: 500,
  retry: { maxAttempts: 1, backoff: { kind: 'immediate' }, retryOn: ['timeout', 'connection', '5xx', '429'] },
  propagateDeadline: true,
};

/** Drives `ratePerS` origins for `durationMs` through the model's clients over a scripted service. */
async function run(
  model: ClientModel,
  service: { latency: (a: Attempt, now: number) => number; kind: (a: Attempt, now: number) => OutcomeKind },
  opts: { ratePerS: number; durationMs: number; deadlineMs?: number },
) {
  const clock = new VirtualClock();
  const transport = new ScriptedTransport(
    clock,
    (a) => service.latency(a, clock.now()),
    (a) => service.kind(a, clock.now()),
  );
  const lines: Record<string, unknown>[] = [];
  const recorder = new Recorder(
    {
      policies: {
        clients: model.instances,
        budget: model.budget !== undefined,
        breaker: model.breaker !== undefined,
        throttle: model.throttle !== undefined,
        hedge: model.hedge !== undefined,
        abandon: model.abandon !== undefined,
      },
    },
    { write: (e) => lines.push(e as Record<string, unknown>), close: async () => {} },
  );
  const clients = buildClients(model, CLIENT_STACK, viaTransport(transport, clock), {
    clock,
    rngFor: (k) => seededRng(1, `client-${k}`),
    emit: (e) => recorder.policy(e),
    observe: observe(recorder),
  });
  const done = drive({
    clock,
    arrivals: flatArrivals('constant', opts.ratePerS, 0, opts.durationMs),
    dispatch: clients.dispatch,
    recorder,
    deadlineMs: opts.deadlineMs ?? Infinity,
    drainMs: 10_000,
  });
  await clock.runUntilIdle(opts.durationMs + 20_000);
  await done;
  clients.dispose();
  return { recorded: recorder.close(), transport, lines, clients };
}

test('the documented order: every retry and hedge meets the breaker; refused attempts are not sent nor counted as attempts', async () => {
  const model: ClientModel = {
    ...base,
    retry: { ...base.retry, maxAttempts: 3 },
    hedge: { delayMs: 100, maxHedges: 1 },
    breaker: { failureRatio: 0.5, windowMs: 10_000, minVolume: 10, openMs: 60_000, probes: 1 },
  };
  // A service that never answers in time: every attempt times out.
  const { recorded, transport, lines } = await run(
    model,
    { latency: () => Infinity, kind: () => 'ok' },
    { ratePerS: 10, durationMs: 3000, deadlineMs: 5000 },
  );
  const attempts = lines.filter((l) => l['e'] === 'attempt');
  const rejected = lines.filter((l) => l['e'] === 'rejected');
  // The breaker saw first attempts, hedges and retries, and opened at its 10th failure.
  assert.equal(recorded.totals.policies.breakerOpens, 1);
  assert.equal(transport.sent.length, recorded.totals.attempts);
  assert.equal(attempts.length, recorded.totals.attempts);
  assert.ok(rejected.length > 0 && rejected.every((l) => l['by'] === 'breaker'));
  // Hedges went through too (marked) and carried the deadline header like every attempt.
  assert.ok(attempts.some((l) => l['hedge'] === true));
  assert.ok(transport.headers.every((h) => h?.[DEADLINE_HEADER] !== undefined));
  // Every attempt number of an origin is accounted for once: as an attempt or a refusal.
  const byOrigin = new Map<number, number[]>();
  for (const l of [...attempts, ...rejected]) {
    const arr = byOrigin.get(l['origin'] as number) ?? [];
    arr.push(l['n'] as number);
    byOrigin.set(l['origin'] as number, arr);
  }
  for (const [o, ns] of byOrigin) {
    ns.sort((a, b) => a - b);
    assert.deepEqual(
      ns,
      ns.map((_, i) => i + 1),
      `origin ${o}: ${ns.join(',')}`,
    );
  }
  // Origins refused by the open breaker end as breaker-open, at once.
  assert.ok(recorded.totals.outcomes['breaker-open'] > 0);
  assert.equal(recorded.totals.offered, recorded.totals.recorded);
});

test('K clients: origins go round-robin, and each client has its own budget', async () => {
  const model: ClientModel = {
    ...base,
    instances: 4,
    retry: { ...base.retry, maxAttempts: 4 },
    budget: { style: 'aws', capacity: 10, retryCost: 5, timeoutCost: 10, perSuccess: 1 },
  };
  const { recorded, transport, clients } = await run(
    model,
    { latency: () => 5, kind: () => 'http-5xx' },
    { ratePerS: 100, durationMs: 1000 },
  );
  // Each client's 10 tokens pay for two 5xx retries: 4 clients, 8 retries in all.
  assert.equal(recorded.totals.offered, 100);
  assert.equal(recorded.totals.attempts, 108);
  // Every origin ends on a denied retry (the 8 retried ones after their retry failed too).
  assert.equal(recorded.totals.policies.retriesDeniedBudget, 100);
  for (const c of clients.instances) assert.equal(c.state.budget?.tokens, 0);
  // Round-robin: origin i goes to client i mod 4, so each client spent its tokens on its
  // first origin (two immediate retries): origins 0-3. One shared budget would have
  // retried only origin 0.
  const retried = transport.sent.filter((a) => a.number > 1).map((a) => `${a.origin.id}#${a.number}`);
  assert.deepEqual(retried.sort(), ['0#2', '0#3', '1#2', '1#3', '2#2', '2#3', '3#2', '3#3']);
});

test("Brooker's many clients: the same load over more clients, each with its own budget, retries more", async () => {
  // A service failing everything fast; 2000 origins; AWS-style budgets of 50 tokens per client.
  const amp: number[] = [];
  for (const k of [1, 10, 100]) {
    const model: ClientModel = {
      ...base,
      instances: k,
      retry: { ...base.retry, maxAttempts: 3 },
      budget: { style: 'aws', capacity: 50, retryCost: 5, timeoutCost: 10, perSuccess: 1 },
    };
    const { recorded } = await run(
      model,
      { latency: () => 5, kind: () => 'http-5xx' },
      { ratePerS: 1000, durationMs: 2000 },
    );
    amp.push(recorded.totals.attempts / recorded.totals.offered);
  }
  // 1 client: 10 retries (1.005x). 10 clients: 100 (1.05x). 100 clients: 1000 (1.5x).
  assert.deepEqual(amp, [1.005, 1.05, 1.5]);
});

test('the breaker state is a series: the fraction of each second the clients spent open, averaged over clients', async () => {
  const model: ClientModel = {
    ...base,
    instances: 2,
    breaker: { failureRatio: 1, windowMs: 10_000, minVolume: 5, openMs: 1500, probes: 1 },
  };
  // Failing until 1.0 s, then healthy. Each client sees 5 failures by ~0.45 s and opens.
  const { recorded, lines } = await run(
    model,
    {
      latency: () => 5,
      kind: (_a, now) => (now < 1000 ? 'http-5xx' : 'ok'),
    },
    { ratePerS: 20, durationMs: 5000 },
  );
  const trans = lines.filter((l) => l['e'] === 'breaker');
  const opens = trans.filter((l) => l['to'] === 'open').map((l) => [l['client'], l['atMs']]);
  // Client 0 gets origins 0, 2, 4, 6, 8 (intended 0, 100, ..., 400 ms): its 5th failure at 405 ms.
  // Client 1 gets 1, 3, ... 9: 5th failure at 455 ms.
  assert.deepEqual(opens, [
    [0, 405],
    [1, 455],
  ]);
  const s = recorded.series;
  // Second 0: open from 405 and 455 to 1000 → (595 + 545) / 2000 = 0.57.
  assert.equal(s.breakerOpen[0], 0.57);
  // Second 1: open until 1905 and 1955 (then half-open; the probe succeeds at once, closed).
  assert.equal(s.breakerOpen[1], (905 + 955) / 2000);
  assert.equal(s.breakerOpen[2], 0);
  assert.deepEqual(s.breakerOpens.slice(0, 3), [2, 0, 0]);
  assert.equal(recorded.totals.policies.breakerOpens, 2);
  assert.ok(s.breakerHalfOpen[1]! > 0);
});

test('a budget without retries still refills from requests, so hedges keep getting tokens', async () => {
  const model: ClientModel = {
    ...base,
    hedge: { delayMs: 10, maxHedges: 1 },
    budget: { style: 'ratio', ratio: 0.5, burst: 1 },
  };
  const { recorded } = await run(
    model,
    { latency: () => 50, kind: () => 'ok' },
    { ratePerS: 100, durationMs: 1000 },
  );
  // Every origin wants a hedge; the burst pays for the first, then one per two origins.
  const hedges = recorded.totals.policies.hedgesSent;
  assert.ok(hedges >= 49 && hedges <= 51, `hedges ${hedges}`);
  assert.equal(recorded.totals.policies.hedgesDenied, 100 - hedges);
  assert.equal(recorded.totals.policies.retriesExhausted, 0); // one try is not "exhausted"
});

test('balance over one replica: no layer, so attempts and events are as before; over three, each try is balanced', async () => {
  const model: ClientModel = {
    ...base,
    retry: { ...base.retry, maxAttempts: 3, otherReplica: true },
    balance: 'p2c',
  };
  // Replica 0 fails every attempt at once; the others serve.
  const service = {
    latency: () => 5,
    kind: (a: Attempt): OutcomeKind => ((a.replica ?? 0) === 0 ? 'http-5xx' : 'ok'),
  };
  const one = await run(model, service, { ratePerS: 100, durationMs: 1000 });
  assert.ok(one.transport.sent.every((a) => !('replica' in a) && !('avoidReplica' in a)));
  assert.ok(one.lines.every((l) => !('replica' in l)));
  assert.equal(one.recorded.totals.outcomes['http-5xx'], 100);

  const three = await run({ ...model, replicas: 3 }, service, { ratePerS: 100, durationMs: 1000 });
  const attempts = three.lines.filter((l) => l['e'] === 'attempt');
  assert.ok(attempts.every((l) => typeof l['replica'] === 'number'));
  // Every try that failed on replica 0 was retried on another, and succeeded there.
  const retries = attempts.filter((l) => l['n'] === 2);
  assert.ok(retries.length > 0 && retries.every((l) => l['replica'] !== 0));
  assert.equal(three.recorded.totals.outcomes.ok, 100);
});
