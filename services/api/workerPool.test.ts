import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WorkerPool, type Job } from './workerPool.js';
import { CodelShedder, QueueTimeShedder, type RejectReason } from './shedding.js';

/** A pool driven by hand: `t` is the clock, jobs finish when released. */
function harness(workers: number, opts: ConstructorParameters<typeof WorkerPool>[1] = {}) {
  const clock = { t: 0 };
  const pool = new WorkerPool(workers, { ...opts, now: () => clock.t });
  const started: number[] = [];
  const rejected: { id: number; reason: RejectReason; waitMs: number }[] = [];
  const release = new Map<number, () => void>();
  const submit = (id: number, extra: Partial<Pick<Job, 'deadlineMs'>> = {}): number | undefined =>
    pool.submit({
      enqueuedMs: clock.t,
      ...extra,
      run: () =>
        new Promise<void>((resolve) => {
          started.push(id);
          release.set(id, resolve);
        }),
      reject: (reason, waitMs) => {
        rejected.push({ id, reason, waitMs });
      },
    });
  const finish = async (id: number): Promise<void> => {
    release.get(id)!();
    release.delete(id);
    await new Promise((r) => setImmediate(r));
  };
  return { clock, pool, started, rejected, submit, finish };
}

test('the pool runs at most c jobs at once and serves the queue in FIFO order', async () => {
  const h = harness(2);
  for (let i = 0; i < 6; i++) h.submit(i);
  assert.deepEqual(h.started, [0, 1]);
  assert.equal(h.pool.queueDepth, 4);
  for (let i = 0; i < 6; i++) await h.finish(i);
  assert.deepEqual(h.started, [0, 1, 2, 3, 4, 5]);
  assert.equal(h.pool.queueDepth, 0);
  assert.equal(h.pool.busyWorkers, 0);
  assert.deepEqual(h.rejected, []);
});

test('LIFO serves the newest waiting job first', async () => {
  const h = harness(1, { queue: 'lifo' });
  for (let i = 0; i < 4; i++) h.submit(i);
  await h.finish(0);
  await h.finish(3);
  await h.finish(2);
  assert.deepEqual(h.started, [0, 3, 2, 1]);
});

test('a bounded queue rejects arrivals with queue_full when full, and only then', async () => {
  const h = harness(1, { queueBound: 2 });
  for (let i = 0; i < 5; i++) h.submit(i);
  assert.deepEqual(h.started, [0]);
  assert.deepEqual(
    h.rejected.map((r) => [r.id, r.reason]),
    [
      [3, 'queue_full'],
      [4, 'queue_full'],
    ],
  );
  await h.finish(0);
  h.submit(5); // room again
  assert.equal(h.rejected.length, 2);
  assert.equal(h.pool.queueDepth, 2);
});

test('a concurrency limit counts running and waiting jobs', () => {
  const h = harness(2, { concurrencyLimit: 3 });
  for (let i = 0; i < 5; i++) h.submit(i);
  assert.deepEqual(h.started, [0, 1]);
  assert.equal(h.pool.queueDepth, 1);
  assert.deepEqual(
    h.rejected.map((r) => r.reason),
    ['concurrency', 'concurrency'],
  );
});

test('queue-time shedding rejects at pickup the jobs that waited past the limit, and serves the rest', async () => {
  const h = harness(1, { shedder: new QueueTimeShedder(100) });
  h.submit(0);
  h.submit(1);
  h.clock.t = 50;
  h.submit(2);
  h.clock.t = 120; // job 1 waited 120 ms, job 2 waited 70 ms
  await h.finish(0);
  assert.deepEqual(h.started, [0, 2]);
  assert.deepEqual(h.rejected, [{ id: 1, reason: 'queue_time', waitMs: 120 }]);
});

test('deadline dropping skips, without running it, a job whose deadline passed while it waited', async () => {
  const h = harness(1, { deadlineDrop: true });
  h.submit(0);
  h.submit(1, { deadlineMs: 30 });
  h.submit(2, { deadlineMs: 500 });
  h.submit(3); // no deadline: always served
  h.clock.t = 40;
  await h.finish(0);
  assert.deepEqual(h.started, [0, 2]);
  assert.deepEqual(
    h.rejected.map((r) => [r.id, r.reason]),
    [[1, 'deadline']],
  );
  h.submit(4, { deadlineMs: 40 }); // already expired on arrival: queued, dropped at pickup
  await h.finish(2);
  await h.finish(3);
  assert.deepEqual(h.started, [0, 2, 3]);
  assert.deepEqual(
    h.rejected.map((r) => r.id),
    [1, 4],
  );
});

test('without deadline dropping an expired job is still served (the default wastes the work)', async () => {
  const h = harness(1);
  h.submit(0);
  h.submit(1, { deadlineMs: 1 });
  h.clock.t = 10;
  await h.finish(0);
  assert.deepEqual(h.started, [0, 1]);
});

test('a job that throws frees its worker', async () => {
  const pool = new WorkerPool(1, { now: () => 0 });
  const ran: number[] = [];
  const job = (id: number, fail: boolean): Job => ({
    enqueuedMs: 0,
    run: () => {
      ran.push(id);
      return fail ? Promise.reject(new Error('boom')) : Promise.resolve();
    },
    reject: () => assert.fail('nothing is rejected'),
  });
  pool.submit(job(0, true));
  pool.submit(job(1, false));
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(ran, [0, 1]);
  assert.equal(pool.busyWorkers, 0);
});

test('a pool needs at least one worker', () => {
  assert.throws(() => new WorkerPool(0), RangeError);
});

test('CoDel tolerates a burst up to the interval, and sheds at the target once the queue stands', () => {
  const c = new CodelShedder(5, 100);
  // First interval: sojourns 0..80 ms (the queue emptied: min 0): a burst, limit = interval.
  assert.equal(c.onPickup(0, 0), undefined);
  assert.equal(c.onPickup(80, 50), undefined);
  assert.equal(c.onPickup(120, 60), 'codel'); // past the interval even in a burst
  // Second interval starts at 100: min of the first was 0, so not overloaded.
  assert.equal(c.onPickup(30, 100), undefined);
  assert.equal(c.standingQueue, false);
  assert.equal(c.onPickup(20, 150), undefined);
  // Third interval: the second's minimum was 20 ms > 5 ms target: a standing queue.
  assert.equal(c.onPickup(10, 200), 'codel');
  assert.equal(c.standingQueue, true);
  assert.equal(c.onPickup(4, 210), undefined);
  // Fourth interval: the third's minimum was 4 ms <= target: back to tolerating bursts.
  assert.equal(c.onPickup(10, 300), undefined);
  assert.equal(c.standingQueue, false);
});

test('CoDel: an empty queue resets the interval minimum to zero', () => {
  const c = new CodelShedder(5, 100);
  c.onPickup(50, 0);
  c.onIdle();
  c.onPickup(50, 100);
  assert.equal(c.standingQueue, false);
  c.onPickup(50, 150);
  c.onPickup(50, 200);
  assert.equal(c.standingQueue, true);
});

test('an abandoned waiting job costs the same: a shared stand-in is served in its place, with its wait and its timeout', () => {
  const serve = (abandon: boolean): { log: string[]; objects: number } => {
    const clock = { t: 0 };
    const pool = new WorkerPool(1, { now: () => clock.t });
    const log: string[] = [];
    const free: (() => void)[] = [];
    // Odd jobs are the ones whose clients leave: named alike in both runs, and like the stand-in.
    const job = (name: string, timeoutAtMs?: number): Job => ({
      enqueuedMs: clock.t,
      timeoutAtMs,
      run: (waitMs) => {
        log.push(`${name} ran after ${waitMs}`);
        return { then: (done: () => void) => free.push(done) };
      },
      reject: (reason, waitMs) => {
        log.push(`${name} ${reason} after ${waitMs}`);
      },
    });
    const standIn = job('gone');
    const tickets: (number | undefined)[] = [];
    for (let i = 0; i < 40; i++) {
      clock.t = i;
      const name = i % 2 ? 'gone' : `j${i}`;
      tickets.push(pool.submit(job(name, i % 5 === 0 ? i + 25 : undefined)));
    }
    assert.equal(tickets[0], undefined, 'the first job ran at once');
    if (abandon) for (let i = 1; i < 40; i += 2) pool.abandon(tickets[i]!, standIn);
    const objects = pool.waitingObjects();
    for (let t = 40; free.length > 0; t += 3) {
      clock.t = t;
      free.shift()!();
    }
    return { log, objects };
  };
  const whole = serve(false);
  const compact = serve(true);
  assert.deepEqual(compact.log, whole.log);
  assert.ok(whole.log.some((l) => l.includes('timeout')) && whole.log.some((l) => l.startsWith('gone ran')));
  assert.equal(whole.objects, 39);
  assert.equal(compact.objects, 19 + 1, 'the 19 waiting even jobs (j0 runs) and the one stand-in');
});

test('resize: shrinking takes no job from a busy worker, and the pool is down to n once they finish; growing serves the queue at once', async () => {
  const h = harness(4);
  for (let i = 0; i < 8; i++) h.submit(i);
  assert.deepEqual(h.started, [0, 1, 2, 3]);
  h.pool.resize(1);
  assert.equal(h.pool.workers, 1);
  assert.equal(h.pool.busyWorkers, 4, 'the four running jobs go on');
  await h.finish(0);
  await h.finish(1);
  await h.finish(2);
  assert.deepEqual(h.started, [0, 1, 2, 3], 'no job starts while more than n are busy');
  await h.finish(3);
  assert.deepEqual(h.started, [0, 1, 2, 3, 4], 'one worker left');
  assert.equal(h.pool.busyWorkers, 1);
  h.pool.resize(3);
  assert.deepEqual(h.started, [0, 1, 2, 3, 4, 5, 6], 'the new workers take waiting jobs at once');
  assert.throws(() => h.pool.resize(0), /whole number >= 1/);
  assert.throws(() => h.pool.resize(1.5), /whole number >= 1/);
});
