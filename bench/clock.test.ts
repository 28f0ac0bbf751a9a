import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RealClock } from './clock.js';

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
