import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import type { Lookup } from './lookup.js';
import { poolOptions, type Mitigations } from './server.js';
import { WorkerPool } from './workerPool.js';
import {
  WorkHandler,
  handlerRngs,
  type ErrorCost,
  type ErrorPathKind,
  type WorkEvents,
  type WorkRequest,
} from './workHandler.js';

/**
 * The /work handler's expensive error path (lab.api.errorCost) on a virtual clock: one
 * worker, constant times, so every answer's time is known to the millisecond.
 */

interface Req extends WorkRequest {
  readonly name: string;
}

/** What a lookup of a key answers, after LOOKUP_MS: the cache seam as the handler sees it. */
const LOOKUP_MS = 10;
const LOOKUPS: Readonly<Record<number, Lookup>> = { 1: 'error', 2: 'hit', 3: 'timeout' };

function harness(o: { errorCost?: ErrorCost; mitigations?: Mitigations; requestTimeoutMs?: number }) {
  const clock = new VirtualClock();
  const pool = new WorkerPool(1, { ...poolOptions(o.mitigations), now: () => clock.now() });
  const answers: Record<string, string> = {};
  const errorPaths: [ErrorPathKind, number][] = [];
  const events: WorkEvents = {
    received() {},
    completed() {},
    rejected() {},
    timedOut() {},
    wasted() {},
    queueWait() {},
    serviceTime() {},
    errorPath: (kind, ms) => errorPaths.push([kind, ms]),
  };
  const cache = {
    lookup: (key: number): Promise<Lookup> =>
      new Promise((resolve) => clock.timer(clock.now() + LOOKUP_MS, () => resolve(LOOKUPS[key]!))),
  };
  const handler = new WorkHandler<Req>(
    {
      work: { dist: 'constant', meanMs: 100 },
      requestTimeoutMs: o.requestTimeoutMs,
      errorCost: o.errorCost,
    },
    pool,
    clock,
    handlerRngs(1),
    events,
    cache,
    (req, status, shed) => (answers[req.name] = `${status}${shed ? ` ${shed}` : ''} at ${clock.now()}`),
  );
  /** Sends `name` at `atMs`; `busy` samples the pool's busy workers at given times. */
  const send = (name: string, atMs: number, r: Partial<WorkRequest> = {}): void => {
    clock.timer(atMs, () =>
      handler.handle({
        name,
        cost: undefined,
        key: r.key,
        deadlineHeaderMs: r.deadlineHeaderMs,
        gone: false,
      }),
    );
  };
  const busyAt = async (ms: number): Promise<number> => {
    await clock.advanceTo(ms);
    return pool.busyWorkers;
  };
  return { clock, answers, errorPaths, send, busyAt };
}

const COST: ErrorCost = { work: { dist: 'constant', meanMs: 300 } };

test('a failing dependency holds its worker for the lookup and the error cost, then answers 500', async () => {
  const h = harness({ errorCost: COST });
  h.send('fails', 0, { key: 1 }); // lookup 0–10 fails; error path 10–310
  h.send('next', 0, { key: 2 }); // waits for the worker: lookup 310–320, work 320–420
  assert.equal(await h.busyAt(200), 1, 'the worker is still on the failed request');
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.answers, { fails: '500 at 310', next: '200 at 420' });
  assert.deepEqual(h.errorPaths, [['dependency', 300]]);
});

test('without an error cost the same failure frees its worker at once (the default)', async () => {
  const h = harness({});
  h.send('fails', 0, { key: 1 });
  h.send('next', 0, { key: 2 });
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.answers, { fails: '500 at 10', next: '200 at 120' });
  assert.deepEqual(h.errorPaths, []);
});

test('a success costs only its work, with or without a lookup', async () => {
  const h = harness({ errorCost: COST });
  h.send('plain', 0);
  h.send('hit', 0, { key: 2 });
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.answers, { plain: '200 at 100', hit: '200 at 210' });
  assert.deepEqual(h.errorPaths, []);
});

test('a lookup that outlives the request timeout pays the error cost before its 504', async () => {
  const h = harness({ errorCost: COST, requestTimeoutMs: 5_000 });
  h.send('slow', 0, { key: 3 }); // the lookup answers timeout at 10
  h.send('next', 0);
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.answers, { slow: '504 at 310', next: '200 at 410' });
  assert.deepEqual(h.errorPaths, [['timeout', 300]]);
});

test('a request picked up past its request timeout pays the error cost before its 504', async () => {
  const h = harness({ errorCost: COST, requestTimeoutMs: 50 });
  h.send('a', 0); // 0–100
  h.send('late', 0); // picked up at 100, past 50: error path 100–400
  h.send('c', 60); // would time out at 110 too: picked at 400, error path 400–700
  h.send('d', 390); // picked up at 700, past its 440: error path 700–1000
  assert.equal(await h.busyAt(250), 1);
  await h.clock.advanceTo(2000);
  assert.deepEqual(h.answers, { a: '200 at 100', late: '504 at 400', c: '504 at 700', d: '504 at 1000' });
  assert.deepEqual(h.errorPaths, [
    ['timeout', 300],
    ['timeout', 300],
    ['timeout', 300],
  ]);
});

test('a deadline drop holds its worker for the error cost before answering 503 deadline', async () => {
  const h = harness({ errorCost: COST, mitigations: { deadlineDrop: true } });
  h.send('a', 0); // 0–100
  h.send('expired', 0, { deadlineHeaderMs: 50 }); // dropped at pickup (100): error path 100–400
  h.send('lives', 0, { deadlineHeaderMs: 5_000 }); // 400–500
  assert.equal(await h.busyAt(250), 1);
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.answers, { a: '200 at 100', expired: '503 deadline at 400', lives: '200 at 500' });
  assert.deepEqual(h.errorPaths, [['deadline', 300]]);
});

test('a shed at pickup is cheap by default and costs the error path with onShed; a refusal on arrival never does', async () => {
  const run = async (onShed: boolean) => {
    const h = harness({
      errorCost: { ...COST, onShed },
      mitigations: { shedQueueTimeMs: 50, queueBound: 1 },
    });
    h.send('a', 0); // 0–100
    h.send('waited', 0); // waited 100 ms at pickup (100): shed queue_time
    h.send('full', 0); // the queue (waited) is full: refused on arrival
    h.send('b', 380); // arrives after the shed
    await h.clock.advanceTo(2000);
    return h;
  };
  const cheap = await run(false);
  assert.deepEqual(cheap.answers, {
    full: '503 queue_full at 0',
    a: '200 at 100',
    waited: '503 queue_time at 100',
    b: '200 at 480',
  });
  assert.deepEqual(cheap.errorPaths, []);
  const costly = await run(true);
  assert.deepEqual(costly.answers, {
    full: '503 queue_full at 0',
    a: '200 at 100',
    waited: '503 queue_time at 400',
    b: '200 at 500', // waited 20 ms for the worker that was on the shed's error path
  });
  assert.deepEqual(costly.errorPaths, [['shed', 300]]);
});

test('the error cost draws from its own stream: declaring one leaves the work draws as they were', async () => {
  /** The work time of every served request, every other one being dropped (deadline) at pickup. */
  const workTimes = async (errorCost: ErrorCost | undefined): Promise<number[]> => {
    const clock = new VirtualClock();
    const pool = new WorkerPool(1, { ...poolOptions({ deadlineDrop: true }), now: () => clock.now() });
    const served: number[] = [];
    const noop = (): void => {};
    const h = new WorkHandler<Req>(
      { work: { dist: 'exponential', meanMs: 100 }, errorCost },
      pool,
      clock,
      handlerRngs(3),
      {
        received: noop,
        completed: noop,
        rejected: noop,
        timedOut: noop,
        wasted: noop,
        queueWait: noop,
        serviceTime: noop,
        errorPath: noop,
      },
      undefined,
      (req, status) => {
        if (status === 200) served.push(clock.now() - Number(req.name) * 10_000);
      },
    );
    // Far apart, so each request finds the worker free; the odd ones have no deadline left.
    for (let i = 0; i < 20; i++)
      clock.timer(i * 10_000, () =>
        h.handle({ name: String(i), cost: undefined, key: undefined, deadlineHeaderMs: i % 2, gone: false }),
      );
    await clock.advanceTo(300_000);
    return served;
  };
  const plain = await workTimes(undefined);
  assert.equal(plain.length, 10);
  assert.deepEqual(await workTimes({ work: { dist: 'exponential', meanMs: 50 } }), plain);
});
