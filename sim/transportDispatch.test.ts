import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attempt } from '../bench/outcome.js';
import type { TransportResult } from '../bench/transport/Transport.js';
import { SimApi } from './api.js';
import { SimClock } from './clock.js';
import { SimTransport } from './transport.js';

/** One worker, 10 ms of work per request; a transport of `connections` in front of it. */
function rig(connections: number): { clock: SimClock; api: SimApi; t: SimTransport } {
  const clock = new SimClock();
  const api = new SimApi(clock, { workers: 1, work: { dist: 'constant', meanMs: 10 }, seed: 1 });
  return { clock, api, t: new SimTransport(clock, api, { connections }) };
}

const attempt = (id: number): Attempt => ({ origin: { id, intendedMs: 0, deadlineMs: Infinity }, number: 1 });

/** Drives the clock, a millisecond at a time, until `ready`. */
async function until(clock: SimClock, ready: () => boolean): Promise<void> {
  let done!: () => void;
  const all = new Promise<void>((r) => (done = r));
  const poll = (): void => void (ready() ? done() : clock.timer(clock.now() + 1, poll));
  poll();
  await clock.run(all);
}

test('dispatch: the api takes its next job before the client hears (a retry sent at once queues behind it)', async () => {
  const { clock, api, t } = rig(10);
  const got: [number, TransportResult, number][] = [];
  for (const id of [1, 2])
    t.dispatch(attempt(id), undefined, {
      onResult: (r) => {
        // The worker that answered has already taken request 2: it is busy, the queue empty.
        got.push([id, r, api.busyWorkers * 10 + api.queueDepth]);
      },
    });
  await until(clock, () => got.length === 2);
  assert.deepEqual(
    got.map(([id, r, state]) => [id, r.kind, state]),
    [
      [1, 'ok', 10],
      [2, 'ok', 0],
    ],
  );
});

test('abort: the attempt settles at once as a timeout, and the api drops the request from its queue', async () => {
  const { clock, api, t } = rig(10);
  const got: TransportResult[] = [];
  t.dispatch(attempt(1), undefined, { onResult: (r) => got.push(r) });
  const second = t.dispatch(attempt(2), undefined, { onResult: (r) => got.push(r) });
  assert.equal(api.queueDepth, 1);
  second.abort();
  assert.deepEqual(got, [{ kind: 'timeout', status: 0 }]);
  second.abort(); // a settled attempt: nothing more
  assert.equal(got.length, 1);
  await until(clock, () => api.counters.completed === 2);
  assert.equal(got[1]!.kind, 'ok');
  // The aborted request stayed queued (the api cannot know) and was worked on: wasted.
  assert.equal(api.counters.wasted, 1);
});

test('abort while waiting for a connection: a timeout with the wait, and the attempt never reaches the api', async () => {
  const { clock, api, t } = rig(1);
  const got: TransportResult[] = [];
  t.dispatch(attempt(1), undefined, { onResult: (r) => got.push(r) });
  const waiting = t.dispatch(attempt(2), undefined, { onResult: (r) => got.push(r) });
  clock.timer(4, () => waiting.abort());
  await until(clock, () => got.length === 2);
  assert.deepEqual(got[0], { kind: 'timeout', status: 0, clientWaitMs: 4 });
  assert.equal(got[1]!.kind, 'ok');
  assert.equal(api.counters.received, 1);
});
