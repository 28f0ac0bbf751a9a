import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealClock, VirtualClock, clearAlarm, setAlarm, type Alarm } from './clock.js';

test('RealClock timers and sleeps never end before their time (Node timers may fire 1 ms early)', async () => {
  const clock = new RealClock();
  const early: string[] = [];
  const waits: Promise<void>[] = [];
  for (let i = 0; i < 40; i++) {
    const at = clock.now() + 1 + (i % 7) * 1.3;
    waits.push(
      new Promise<void>((resolve) => {
        clock.timer(at, () => {
          const now = clock.now();
          if (now < at) early.push(`timer ${(at - now).toFixed(3)} ms early`);
          resolve();
        });
      }),
    );
    waits.push(
      clock.sleepUntil(at).then(() => {
        const now = clock.now();
        if (now < at) early.push(`sleep ${(at - now).toFixed(3)} ms early`);
      }),
    );
  }
  await Promise.all(waits);
  assert.deepEqual(early, []);
});

test('a cancelled RealClock timer never fires', async () => {
  const clock = new RealClock();
  let fired = 0;
  const cancel = clock.timer(clock.now() + 2, () => fired++);
  cancel();
  await clock.sleepUntil(clock.now() + 10);
  assert.equal(fired, 0);
});

test('sub-millisecond waits (through the waker thread) all end, never early, and a cancelled one never fires', async () => {
  const clock = new RealClock();
  const order: number[] = [];
  const early: string[] = [];
  const base = clock.now() + 0.3;
  // Offsets 0.00–1.90 ms, added out of order: the waker keeps the earliest in front.
  const offsets = [1.9, 0.15, 1.2, 0.6, 0.05, 1.55, 0.9, 0.3];
  const cancelled = clock.timer(base + 0.7, () => order.push(-1));
  await Promise.all(
    offsets.map(
      (o) =>
        new Promise<void>((resolve) =>
          clock.timer(base + o, () => {
            if (clock.now() < base + o) early.push(`${o}`);
            order.push(o);
            resolve();
          }),
        ),
    ),
  );
  cancelled();
  await clock.sleepUntil(clock.now() + 1);
  assert.deepEqual(early, []);
  // -1 fired only if its cancel came too late (it was due at 0.7 ms, before the last ones).
  // Order is not asserted: on a loaded machine a late event loop may run a spun wait and a
  // waker's wait due just before it in either order.
  const fired = order.filter((o) => o >= 0);
  assert.deepEqual(
    [...fired].sort((a, b) => a - b),
    [...offsets].sort((a, b) => a - b),
  );
});

test('an aborted sub-millisecond sleep resolves at once, by the abort, not by its time', async () => {
  const clock = new RealClock();
  const ctl = new AbortController();
  const p = clock.sleepUntil(clock.now() + 1.5, ctl.signal);
  ctl.abort();
  // The abort resolves the sleep synchronously: it wins over two microtask turns, which
  // no timer or wake-up can (they need an event-loop turn).
  const first = await Promise.race([
    p.then(() => 'by the abort'),
    Promise.resolve()
      .then(() => undefined)
      .then(() => 'still pending'),
  ]);
  assert.equal(first, 'by the abort');
});

test('a process whose only pending work was a sub-millisecond wait exits: the waker thread does not hold it', async () => {
  const { spawnSync } = await import('node:child_process');
  const url = new URL('./clock.js', import.meta.url).href;
  const r = spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import { RealClock } from '${url}'; const c = new RealClock(); await c.sleepUntil(c.now() + 0.5); c.timer(c.now() + 0.4, () => console.log('fired'));`,
    ],
    { timeout: 20_000, encoding: 'utf8' },
  );
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal ?? ''} ${r.stderr}`);
  // ... and a pending wake-up does hold it until it fires.
  assert.equal(r.stdout.trim(), 'fired');
});

test('a RealClock timer never calls back before timer() returns, even when its time is already up', async () => {
  const clock = new RealClock();
  for (const at of [clock.now() - 5, clock.now(), clock.now() + 0.05, clock.now() + 0.5, clock.now() + 3]) {
    let returned = false;
    let calledEarly = false;
    await new Promise<void>((resolve) => {
      clock.timer(at, () => {
        calledEarly = !returned;
        resolve();
      });
      returned = true;
    });
    assert.equal(calledEarly, false, `timer at ${at}`);
  }
});

test('setAlarm on a clock without alarms: rings at its time through `timer`, clearAlarm stops it, a rung handle clears nothing', async () => {
  const clock = new VirtualClock();
  const log: string[] = [];
  const alarm = (name: string): Alarm => ({ onAlarm: () => log.push(`${name} ${clock.now()}`) });
  const a = alarm('a');
  const b = alarm('b');
  const ha = setAlarm(clock, 10, a);
  const hb = setAlarm(clock, 5, b);
  assert.notEqual(ha, hb);
  const c = alarm('c');
  clearAlarm(clock, setAlarm(clock, 7, c), c);
  await clock.runUntilIdle();
  clearAlarm(clock, ha, a); // rang already: nothing to do
  assert.deepEqual(log, ['b 5', 'a 10']);
  assert.equal(clock.pendingTimers, 0);
});
