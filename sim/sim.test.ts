import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runOnce } from '../orchestrator/run/runOnce.js';
import { StatusLine } from '../orchestrator/run/status.js';
import { simulate } from '../orchestrator/model/simulate.js';
import { planOf, planOfFile } from '../test/helpers/plan.js';
import { ACCEPT_BACKLOG } from './api.js';
import { registerRuntimes } from '../orchestrator/cli/runtimes.js';

registerRuntimes();

const sum = (xs: readonly (number | null | undefined)[]): number =>
  xs.reduce<number>((a, x) => a + (x ?? 0), 0);

/** A small lab: 4 workers × 10 ms (400/s), 100/s evenly spaced, 1 s client timeout, no retries. */
function small(trigger: string, opts: { lab?: string; load?: string; client?: string } = {}): string {
  return `
name: t
lab:
  api: { workers: 4, work: { dist: constant, mean: 10ms } }
${opts.lab ?? ''}
load: ${opts.load ?? '{ arrival: constant, rate: 100/s }'}
client: ${opts.client ?? '{ timeout: 1s, retry: { policy: none } }'}
schedule: { warmup: 1s, baseline: 4s, ${trigger.startsWith('[') ? 'triggers' : 'trigger'}: ${trigger}, observe: 5s }
recovery: { within: 5x, tolerance: 10%, window: 1s, hold: 1s }
seed: 1
`;
}
const cacheLab = `  cache: { ttl: 1h, prewarm: true }
  db: { keys: 100, pool: 4, query: { dist: constant, mean: 20ms } }`;
const keyed =
  '{ arrival: constant, rate: 100/s, mix: [{ name: r, share: 100%, key: { dist: uniform, keys: 100 } }] }';

test('same seed, same summary.json: two simulated runs of retry-storm write identical files; another seed does not', async () => {
  const write = async (seed: number): Promise<string> => {
    const dir = mkdtempSync(join(tmpdir(), 'metabench-simdet-'));
    const plan = planOfFile('retry-storm', { scale: 0.1, set: [`seed=${seed}`] });
    await runOnce(plan, dir, {
      journal: { record: () => undefined, clear: () => undefined } as never,
      status: new StatusLine(process.stderr, true),
      stop: new AbortController().signal,
      runtime: 'sim',
    });
    return readFileSync(join(dir, 'summary.json'), 'utf8');
  };
  const a = await write(42);
  const b = await write(42);
  assert.equal(a, b);
  assert.equal(JSON.parse(a).runtime, 'sim');
  assert.notEqual(await write(43), a);
});

test('pause: the kernel keeps what arrives, the api reads it on resume and works on requests whose clients left', async () => {
  const r = await simulate(planOf(small('{ kind: pause, target: api, duration: 2s }')));
  const rec = r.server!.received;
  assert.deepEqual(rec.slice(5, 7), [0, 0], 'nothing is read while paused');
  assert.equal(rec[7], 300, 'on resume: the 200 kept requests and the second’s own 100');
  // Origins of the pause's first second timed out (1 s) before the api read them: wasted work.
  assert.ok(sum(r.server!.wasted) >= 100, `wasted ${sum(r.server!.wasted)}`);
  assert.equal(r.summary.outcomes.timeout + r.summary.outcomes.ok, r.summary.offered);
  assert.equal(r.summary.recovered, true);
});

test('pause: beyond the accept backlog, new connections wait for SYN retransmits and attempts that give up first never arrive', async () => {
  // 2000/s for a 0.5 s pause with a 100 ms timeout: each attempt needs a new connection
  // (the timed-out ones are destroyed), so ~1000 SYNs against a backlog of 512.
  const yaml = small('{ kind: pause, target: api, duration: 500ms }', {
    load: '{ arrival: constant, rate: 2000/s }',
    lab: '',
    client: '{ timeout: 100ms, retry: { policy: none } }',
  }).replace(
    'workers: 4, work: { dist: constant, mean: 10ms }',
    'workers: 64, work: { dist: constant, mean: 10ms }',
  );
  const r = await simulate(planOf(yaml));
  // Second 5 holds the pause (5.0–5.5 s) and 1000 requests read normally after it.
  const kept = r.server!.received[5]! - 1000;
  // The accept queue (backlog + 1), plus the few kept-alive connections idle at the pause
  // (evenly spaced arrivals never needed more than the ~20 in use).
  assert.ok(kept >= ACCEPT_BACKLOG + 1 && kept <= ACCEPT_BACKLOG + 21, `kept ${kept}`);
  assert.ok(r.summary.outcomes.timeout > 800, JSON.stringify(r.summary.outcomes));
});

test('kill: work in progress is reset, connections are refused while it is down, a restart serves again', async () => {
  const r = await simulate(planOf(small('{ kind: kill, target: api, duration: 2s }')));
  const o = r.summary.outcomes;
  assert.equal(o['conn-refused'], 200);
  assert.equal(o['conn-reset'], 1, 'the one request in progress at the kill');
  assert.equal(r.recorded.series.goodput[8], 100, 'served again after the restart');
  assert.equal(r.summary.triggers[0]!.endS, 7);
  assert.equal(r.lab.api.starts, 2);
});

test('kill without restart: the api stays down for the rest of the run', async () => {
  const r = await simulate(planOf(small('{ kind: kill, target: api, duration: 2s, restart: false }')));
  assert.equal(sum(r.recorded.series.goodput.slice(6)), 0);
  assert.equal(r.summary.outcomes['conn-refused'], 700);
  assert.equal(r.summary.recovered, false);
});

test('a load spike multiplies the offered rate over its span', async () => {
  const r = await simulate(planOf(small('{ kind: load-spike, factor: 3x, duration: 2s }')));
  assert.deepEqual(r.recorded.series.offered.slice(4, 8), [100, 300, 300, 100]);
  assert.deepEqual(r.server!.received.slice(4, 8), [100, 300, 300, 100]);
});

test('flush-cache: every key misses until refilled; the hit ratio climbs back', async () => {
  const r = await simulate(
    planOf(small('{ kind: flush-cache, duration: 2s }', { lab: cacheLab, load: keyed })),
  );
  const x = r.server!.extra!;
  assert.equal(x['cache_misses']![4], 0);
  assert.ok(x['cache_misses']![5]! > 50, `misses just after the flush ${x['cache_misses']![5]}`);
  assert.ok(x['cache_hits']![10]! >= 95);
  assert.equal(r.summary.outcomes.ok, r.summary.offered);
});

test('partition of the redis link: lookups fail over to the database (ioredis reconnection), fills fail, and it heals', async () => {
  const r = await simulate(
    planOf(small('{ kind: partition, link: redis, duration: 2s }', { lab: cacheLab, load: keyed })),
  );
  const x = r.server!.extra!;
  assert.ok(sum(x['cache_errors']!) > 0);
  assert.ok(sum(x['cache_fill_errors']!) > 0);
  assert.equal(x['cache_errors']![9], 0);
  assert.ok(x['cache_hits']![9]! >= 95);
});

test('latency on the postgres link slows the misses that cross it', async () => {
  const flushThenLatency =
    '[{ kind: flush-cache, duration: 100ms }, { kind: latency, link: postgres, latency: 300ms, duration: 3s }]';
  const slow = await simulate(planOf(small(flushThenLatency, { lab: cacheLab, load: keyed })));
  const fast = await simulate(
    planOf(small('{ kind: flush-cache, duration: 3100ms }', { lab: cacheLab, load: keyed })),
  );
  assert.ok(
    slow.recorded.windows['trigger']!.response.max! > 300,
    `max response in the latency window ${slow.recorded.windows['trigger']!.response.max}`,
  );
  assert.ok(fast.recorded.windows['trigger']!.response.max! < 300);
});

test('timeout toxic (black hole) on the redis link: lookups hang until it is removed, then the connection is replaced', async () => {
  const r = await simulate(
    planOf(small('{ kind: timeout, link: redis, duration: 2s }', { lab: cacheLab + '\n', load: keyed })),
  );
  const x = r.server!.extra!;
  assert.equal(sum(x['cache_hits']!.slice(5, 7)), 0, 'no answer from redis during the black hole');
  assert.ok(x['cache_hits']![7]! > 100, 'the waiting lookups answered after reconnecting');
  assert.equal(r.summary.recovered, true);
});

test('pause of postgres: misses wait for it (the pool is held), and complete when it runs again', async () => {
  const r = await simulate(
    planOf(
      small('[{ kind: flush-cache, duration: 1s }, { kind: pause, target: postgres, duration: 2s }]', {
        lab: cacheLab,
        load: keyed,
      }),
    ),
  );
  const x = r.server!.extra!;
  assert.equal(x['db_pool_busy']![6], 4, 'every connection held by a query in the paused postgres');
  assert.equal(x['db_queries']![7], 0);
  assert.ok(x['db_queries']![8]! > 0);
});

test('mitigations are the api’s own: a bounded queue sheds (503 x-shed) when the pause’s backlog arrives', async () => {
  const r = await simulate(
    planOf(
      small('{ kind: pause, target: api, duration: 2s }').replace(
        'work: { dist: constant, mean: 10ms } }',
        'work: { dist: constant, mean: 10ms }, queueLimit: 20 }',
      ),
    ),
  );
  const x = r.server!.extra!;
  assert.ok(x['rejected_queue_full']![7]! > 100, JSON.stringify(x['rejected_queue_full']));
  // Clients of the pause's first second had left; those still waiting read the 503s.
  assert.ok(r.summary.outcomes.shed > 50, JSON.stringify(r.summary.outcomes));
});

test('the connection cap: attempts beyond it wait for a connection (reported), even when the api refuses everything at once', async () => {
  const yaml = small('{ kind: pause, target: api, duration: 1s }', {
    load: '{ arrival: constant, rate: 500/s }',
    client: '{ timeout: 1s, retry: { policy: immediate, maxAttempts: 4 }, connections: 2 }',
  }).replace(
    'work: { dist: constant, mean: 10ms } }',
    'work: { dist: constant, mean: 10ms }, queueLimit: 0 }',
  );
  const r = await simulate(planOf(yaml));
  const s = r.summary;
  assert.ok(s.clientWait!.samples > 500, JSON.stringify(s.clientWait));
  assert.ok(
    s.warnings.some((w) => /connection cap \(2\)/.test(w)),
    s.warnings.join('; '),
  );
  assert.ok(s.outcomes.shed > 0);
  assert.equal(s.offered, s.recorded);
});
