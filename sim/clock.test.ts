import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimClock } from './clock.js';
import type { Alarm } from '../foundation/clock.js';
import { SimProcess } from './process.js';

test('SimClock fires in (time, creation) order, lanes (repeated delays) and heap alike; cancelled timers never fire', async () => {
  const clock = new SimClock();
  let s = 7;
  const rnd = (): number => (s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 4294967296;
  const expected: { at: number; seq: number; id: number }[] = [];
  const got: number[] = [];
  const cancelled = new Set<number>();
  let seq = 0;
  let id = 0;
  // Each fired timer sets a few more: a repeated delay (a lane once it has come often),
  // an irregular one, one due now, one in the past; one in four is cancelled.
  const add = (atMs: number): void => {
    const me = id++;
    const at = Math.max(atMs, clock.now());
    expected.push({ at, seq: seq++, id: me });
    const cancel = clock.timer(atMs, () => {
      assert.equal(clock.now(), at);
      got.push(me);
      if (id < 20_000) {
        add(clock.now() + 500);
        add(clock.now() + 1 + Math.floor(rnd() * 8) / 4);
        add(clock.now() + rnd() * 700);
        if (rnd() < 0.2) add(clock.now());
        if (rnd() < 0.1) add(clock.now() - 3);
      }
    });
    if (rnd() < 0.25 && me > 0) {
      cancelled.add(me);
      cancel();
      cancel();
    }
  };
  for (let i = 0; i < 50; i++) add(i * 3.5);
  await clock.run(new Promise<void>((resolve) => clock.timer(1e9, resolve)));
  const order = expected
    .filter((e) => !cancelled.has(e.id))
    .sort((a, b) => a.at - b.at || a.seq - b.seq)
    .map((e) => e.id);
  assert.deepEqual(got, order);
  assert.equal(clock.fired, got.length + 1);
  assert.equal(clock.pendingTimers, 0);
});

test('SimClock: between two timers every promise continuation and nextTick runs, even due at the same time', async () => {
  const clock = new SimClock();
  const log: string[] = [];
  const chain = async (name: string): Promise<void> => {
    await null;
    await Promise.resolve();
    await new Promise<void>((r) => process.nextTick(r));
    await null;
    log.push(`${name} done`);
  };
  for (let i = 0; i < 600; i++)
    clock.timer(10, () => {
      log.push(`fire ${i}`);
      void chain(`${i}`);
    });
  await clock.run(clock.sleepUntil(20));
  const want: string[] = [];
  for (let i = 0; i < 600; i++) want.push(`fire ${i}`, `${i} done`);
  assert.deepEqual(log, want);
});

test('SimClock.run settles as its promise does, rejects on a deadlock and past the limit', async () => {
  const clock = new SimClock();
  assert.equal(await clock.run(clock.sleepUntil(5).then(() => 'v')), 'v');
  assert.equal(clock.now(), 5);
  await assert.rejects(clock.run(clock.sleepUntil(8).then(() => Promise.reject(new Error('boom')))), /boom/);
  await assert.rejects(clock.run(new Promise(() => undefined)), /deadlock/);
  clock.timer(1000, () => undefined);
  await assert.rejects(clock.run(new Promise(() => undefined), 500), /went past 500 ms/);
  assert.equal(clock.pendingTimers, 1, 'the timer past the limit stays');
  const ac = new AbortController();
  const slept = clock.sleepUntil(2000, ac.signal);
  clock.timer(1500, () => ac.abort());
  await clock.run(slept);
  assert.equal(clock.now(), 1500, 'an aborted sleep ends at once');
});

test('SimProcess: timers of a paused process run on resume, in order; a killed one forgets them', async () => {
  const clock = new SimClock();
  const p = new SimProcess('api', clock);
  const log: string[] = [];
  p.at(10, () => log.push(`a ${clock.now()}`));
  p.at(20, () => log.push(`b ${clock.now()}`));
  const cancel = p.at(25, () => log.push('cancelled'));
  cancel();
  clock.timer(5, () => p.pause());
  clock.timer(30, () => p.resume());
  p.at(40, () => log.push(`c ${clock.now()}`));
  clock.timer(35, () => p.kill());
  clock.timer(45, () => p.start());
  p.at(50, () => log.push('old epoch'));
  clock.timer(46, () => p.at(50, () => log.push(`d ${clock.now()}`)));
  await clock.run(clock.sleepUntil(100));
  assert.deepEqual(log, ['a 30', 'b 30', 'd 50']);
});

test('SimProcess.wrapped: its timers run through the wrap, after a pause on resume (still wrapped), never after a kill', async () => {
  const clock = new SimClock();
  const log: string[] = [];
  const p = new SimProcess('api', clock, (fn) => {
    log.push('(');
    fn();
    log.push(')');
  });
  p.wrapped(10, () => log.push(`a ${clock.now()}`), false);
  const cancel = p.wrapped(15, () => log.push('cancelled'), true);
  cancel();
  p.at(12, () => log.push(`plain ${clock.now()}`));
  clock.timer(11, () => p.pause());
  p.wrapped(20, () => log.push(`b ${clock.now()}`), false);
  clock.timer(30, () => p.resume());
  clock.timer(35, () => p.kill());
  p.wrapped(40, () => log.push('old epoch'), false);
  await clock.run(clock.sleepUntil(100));
  assert.deepEqual(log, ['(', 'a 10', ')', 'plain 30', '(', 'b 30', ')']);
  assert.throws(() => new SimProcess('db', clock).wrapped(1, () => undefined, false), /no wrap/);
});

test('SimClock holds thousands of pending timers at once (its arrays and lanes grow) and cancels across reuse of a slot', async () => {
  const clock = new SimClock();
  const got: number[] = [];
  const cancels: (() => void)[] = [];
  // 5,000 at the same delay (one lane, many times its first size) and 5,000 irregular.
  for (let i = 0; i < 5000; i++) {
    clock.timer(1, () => {
      cancels.push(clock.timer(clock.now() + 300, () => got.push(i)));
      clock.timer(clock.now() + 2 + ((i * 7919) % 5000) / 10, () => got.push(10_000 + i));
    });
  }
  assert.equal(clock.pendingTimers, 5000);
  await clock.run(clock.sleepUntil(2));
  assert.equal(clock.pendingTimers, 10_000);
  for (let i = 0; i < 5000; i += 2) cancels[i]!();
  await clock.run(clock.sleepUntil(1000));
  assert.equal(got.length, 7500);
  const lane = got.filter((x) => x < 10_000);
  assert.deepEqual(
    lane,
    Array.from({ length: 2500 }, (_, k) => 2 * k + 1),
  );
  // A cancel called after its timer fired (its slot since reused) stops nothing.
  let fired = false;
  for (const c of cancels) c();
  clock.timer(clock.now() + 1, () => (fired = true));
  for (const c of cancels) c();
  await clock.run(clock.sleepUntil(clock.now() + 2));
  assert.ok(fired);
});

test('SimClock.alarm: alarms and timers fire in one (time, creation) order; cancelAlarm stops only its own target', async () => {
  const clock = new SimClock();
  const log: string[] = [];
  const alarm = (name: string): Alarm => ({ onAlarm: () => log.push(`${name} ${clock.now()}`) });
  const a = alarm('a');
  clock.alarm(10, a);
  clock.timer(10, () => log.push(`t ${clock.now()}`));
  const b = alarm('b');
  clock.alarm(5, b);
  const c = alarm('c');
  const hc = clock.alarm(7, c);
  clock.cancelAlarm(hc, a); // not c's target: c still rings
  const d = alarm('d');
  clock.cancelAlarm(clock.alarm(8, d), d);
  await clock.run(clock.sleepUntil(20));
  assert.deepEqual(log, ['b 5', 'c 7', 'a 10', 't 10']);
  assert.equal(clock.pendingTimers, 0);
});

test('SimProcess.wrappedAlarm: runs through a wrap that takes alarms, after a pause on resume; refused without one', async () => {
  const clock = new SimClock();
  const log: string[] = [];
  const p = new SimProcess(
    'api',
    clock,
    (fn) => {
      log.push('(');
      if (typeof fn === 'function') fn();
      else fn.onAlarm();
      log.push(')');
    },
    true,
  );
  p.wrappedAlarm(10, { onAlarm: () => log.push(`a ${clock.now()}`) });
  clock.timer(15, () => p.pause());
  p.wrappedAlarm(20, { onAlarm: () => log.push(`b ${clock.now()}`) });
  clock.timer(30, () => p.resume());
  await clock.run(clock.sleepUntil(100));
  assert.deepEqual(log, ['(', 'a 10', ')', '(', 'b 30', ')']);
  assert.throws(
    () => new SimProcess('db', clock, () => undefined).wrappedAlarm(1, { onAlarm: () => {} }),
    /no wrap/,
  );
});
