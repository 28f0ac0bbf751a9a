import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { VirtualClock } from '../foundation/clock.js';
import { parsePrometheusText } from '../orchestrator/scrape/prometheusText.js';
import { startApi, type ApiConfig } from '../services/api/server.js';
import { SimApi, type SimRequest } from './api.js';
import { SimClock } from './clock.js';

/**
 * The /work handler is one piece of code (services/api/workHandler.ts) that the express
 * api and the simulated api both call. Here one timeline of requests goes through
 * both, each on a clock the test drives: the express route over real sockets on a
 * VirtualClock, the simulated api on the SimClock. Every answer and every counter must
 * agree; a handler copied and changed on one side would not.
 */

type Cfg = Pick<ApiConfig, 'workers' | 'work' | 'seed'> &
  Pick<Partial<ApiConfig>, 'costs' | 'mitigations' | 'requestTimeoutMs' | 'errorCost'>;

const cfg = {
  workers: 1,
  work: { dist: 'constant', meanMs: 100 },
  costs: { heavy: { dist: 'constant', meanMs: 200 } },
  requestTimeoutMs: 350,
  mitigations: { queueBound: 4, deadlineDrop: true },
  seed: 7,
} satisfies Partial<ApiConfig>;

interface Arrival {
  readonly name: string;
  readonly atMs: number;
  readonly cost?: string;
  /** x-deadline-ms */
  readonly deadlineMs?: number;
  /** The client goes away then (its connection destroyed). */
  readonly leavesAtMs?: number;
}

// One worker, 100 ms per request (heavy: 200 ms), a queue of 4, a 350 ms request timeout.
const timeline: readonly Arrival[] = [
  { name: 'a', atMs: 0 }, // runs 0–100
  { name: 'b', atMs: 10, cost: 'heavy' }, // runs 100–300
  { name: 'c', atMs: 20, deadlineMs: 50 }, // picked up at 300, past its propagated deadline
  { name: 'd', atMs: 30 }, // runs 300–400
  { name: 'e', atMs: 40 }, // picked up at 400, past its request timeout (390)
  { name: 'e2', atMs: 45 }, // the queue (b, c, d, e) is full
  { name: 'f', atMs: 50, cost: 'nope' }, // no such cost class
  { name: 'g', atMs: 310, leavesAtMs: 450 }, // runs 400–500 for a client that left
  { name: 'h', atMs: 320 }, // runs 500–600
];
const END_MS = 1500;

type Outcome = Record<string, string>;
interface Counts {
  received: number;
  completed: number;
  wasted: number;
  timedOut: number;
  rejected: Record<string, number>;
  /** api_error_path_seconds_total by kind. */
  errorPathSeconds: Record<string, number>;
}

async function throughExpress(
  cfg: Cfg,
  timeline: readonly Arrival[],
): Promise<{ outcome: Outcome; counts: Counts }> {
  const clock = new VirtualClock();
  const api = await startApi({ host: '127.0.0.1', port: 0, ...cfg }, clock);
  const url = `http://127.0.0.1:${api.port}`;
  const metrics = async (): Promise<Map<string, number>> =>
    parsePrometheusText(await (await request(`${url}/metrics`)).body.text());
  const connections = (): Promise<number> =>
    new Promise((resolve, reject) => api.server.getConnections((err, n) => (err ? reject(err) : resolve(n))));
  const outcome: Outcome = {};
  const pending: Promise<void>[] = [];
  const leaving: { atMs: number; leave: () => void }[] = [];
  try {
    let received = 0;
    for (const a of timeline) {
      await clock.advanceTo(a.atMs);
      const ac = new AbortController();
      const q = a.cost ? `?cost=${a.cost}` : '';
      pending.push(
        request(`${url}/work${q}`, {
          signal: ac.signal,
          headers: a.deadlineMs === undefined ? {} : { 'x-deadline-ms': String(a.deadlineMs) },
        }).then(
          async (r) => {
            await r.body.text();
            const shed = r.headers['x-shed'];
            outcome[a.name] = `${r.statusCode}${typeof shed === 'string' ? ` ${shed}` : ''}`;
          },
          () => {
            outcome[a.name] = 'gone';
          },
        ),
      );
      if (a.leavesAtMs !== undefined) leaving.push({ atMs: a.leavesAtMs, leave: () => ac.abort() });
      // Arrival order is the timeline's: wait until the api has read this request.
      received++;
      while ((await metrics()).get('api_requests_received_total') !== received)
        await new Promise((r) => setImmediate(r));
    }
    for (const l of leaving) {
      await clock.advanceTo(l.atMs);
      const before = await connections();
      l.leave();
      // The api sees the client go when its socket closes.
      while ((await connections()) >= before) await new Promise((r) => setImmediate(r));
    }
    await clock.advanceTo(END_MS);
    await Promise.all(pending);
    const m = await metrics();
    const sumOf = (prefix: string): number =>
      [...m].filter(([k]) => k.startsWith(`${prefix}{`)).reduce((s, [, v]) => s + v, 0);
    const labelled = (metric: string, label: string): Record<string, number> => {
      const out: Record<string, number> = {};
      for (const [k, v] of m) {
        const r = new RegExp(`^${metric}\\{${label}="(\\w+)"\\}$`).exec(k);
        if (r && v > 0) out[r[1]!] = v;
      }
      return out;
    };
    return {
      outcome,
      counts: {
        received: m.get('api_requests_received_total') ?? 0,
        completed: sumOf('api_requests_completed_total'),
        wasted: m.get('api_wasted_work_total') ?? 0,
        timedOut: m.get('api_timed_out_total') ?? 0,
        rejected: labelled('api_rejected_total', 'reason'),
        errorPathSeconds: labelled('api_error_path_seconds_total', 'kind'),
      },
    };
  } finally {
    await api.close();
  }
}

async function throughSimulation(
  cfg: Cfg,
  timeline: readonly Arrival[],
): Promise<{ outcome: Outcome; counts: Counts }> {
  const clock = new SimClock();
  const api = new SimApi(clock, cfg);
  const outcome: Outcome = {};
  for (const a of timeline) {
    const req: SimRequest & { gone: boolean } = {
      route: '/work',
      cost: a.cost,
      key: undefined,
      deadlineHeaderMs: a.deadlineMs,
      gone: false,
      answer: (status, shed) => (outcome[a.name] = `${status}${shed ? ` ${shed}` : ''}`),
      reset: () => assert.fail('reset'),
      refuse: () => assert.fail('refused'),
      connectTimedOut: () => assert.fail('connect timed out'),
      queued: undefined,
    };
    clock.timer(a.atMs, () => api.connect(req, false));
    if (a.leavesAtMs !== undefined)
      clock.timer(a.leavesAtMs, () => {
        req.gone = true;
        outcome[a.name] = 'gone';
      });
  }
  await clock.run(new Promise<void>((resolve) => clock.timer(END_MS, resolve)));
  const c = api.counters;
  return {
    outcome,
    counts: {
      received: c.received,
      completed: c.completed,
      wasted: c.wasted,
      timedOut: c.timedOut,
      rejected: { ...c.rejected } as Record<string, number>,
      errorPathSeconds: Object.fromEntries(Object.entries(c.errorPathMs).map(([k, ms]) => [k, ms / 1000])),
    },
  };
}

/**
 * `timeline` through both: the express route must give `expected` (what the timeline was
 * built to exercise), and the simulated api the same answers and counters.
 */
async function bothAgree(
  cfg: Cfg,
  timeline: readonly Arrival[],
  expected: { outcome: Outcome; counts: Counts },
): Promise<void> {
  const lab = await throughExpress(cfg, timeline);
  const sim = await throughSimulation(cfg, timeline);
  assert.deepEqual(lab, expected);
  assert.deepEqual(sim.outcome, lab.outcome);
  assert.deepEqual(sim.counts, lab.counts);
}

test('one timeline through the express route and the simulated api: the same answers and the same counters', async () => {
  // Every ending of the handler.
  await bothAgree(cfg, timeline, {
    outcome: {
      a: '200',
      b: '200',
      c: '503 deadline',
      d: '200',
      e: '504',
      e2: '503 queue_full',
      f: '400',
      g: 'gone',
      h: '200',
    },
    counts: {
      received: 9,
      completed: 9,
      wasted: 1,
      timedOut: 1,
      rejected: { deadline: 1, queue_full: 1 },
      errorPathSeconds: {},
    },
  });
});

// The expensive error path: one worker, 100 ms of work, every error costs 200 ms more
// (sheds too), a 350 ms request timeout, a 250 ms queue-time limit.
const errorCostCfg = {
  workers: 1,
  work: { dist: 'constant', meanMs: 100 },
  requestTimeoutMs: 350,
  mitigations: { deadlineDrop: true, shedQueueTimeMs: 250 },
  errorCost: { work: { dist: 'constant', meanMs: 200 }, onShed: true },
  seed: 7,
} satisfies Cfg;
const errorTimeline: readonly Arrival[] = [
  { name: 'a', atMs: 0 }, // runs 0–100
  { name: 'b', atMs: 10, deadlineMs: 50 }, // dropped at 100 (deadline): error path 100–300
  { name: 'c', atMs: 20 }, // picked up at 300 after 280 ms: shed, error path 300–500
  { name: 'd', atMs: 30 }, // picked up at 500, past its timeout (380): error path 500–700
  { name: 'e', atMs: 480 }, // runs 700–800
  { name: 'f', atMs: 490, leavesAtMs: 600 }, // shed at 800 for a client that left: error path 800–1000
];

test('the error path through the express route and the simulated api: the same answers, times held and counters', async () => {
  await bothAgree(errorCostCfg, errorTimeline, {
    outcome: {
      a: '200',
      b: '503 deadline',
      c: '503 queue_time',
      d: '504',
      e: '200',
      f: 'gone',
    },
    counts: {
      received: 6,
      completed: 6,
      wasted: 0,
      timedOut: 1,
      rejected: { deadline: 1, queue_time: 2 },
      errorPathSeconds: { deadline: 0.2, shed: 0.4, timeout: 0.2 },
    },
  });
});
