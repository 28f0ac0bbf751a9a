import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimApi, type SimRequest } from './api.js';
import { SimClock } from './clock.js';
import { SimServerSeries } from './series.js';

test("the simulated api's series carry its error-path seconds by kind, as the lab's scrape names them", async () => {
  const clock = new SimClock();
  // One worker, 100 ms of work; a request with no deadline left is dropped and costs 400 ms.
  const api = new SimApi(clock, {
    workers: 1,
    work: { dist: 'constant', meanMs: 100 },
    mitigations: { deadlineDrop: true },
    errorCost: { work: { dist: 'constant', meanMs: 400 } },
    seed: 1,
  });
  const series = new SimServerSeries(api, clock, false);
  series.start();
  const answers: number[] = [];
  const send = (atMs: number, deadlineMs: number | undefined): void => {
    const req: SimRequest = {
      route: '/work',
      cost: undefined,
      key: undefined,
      deadlineHeaderMs: deadlineMs,
      gone: false,
      answer: (status) => answers.push(status),
      reset: () => assert.fail('reset'),
      refuse: () => assert.fail('refused'),
      connectTimedOut: () => assert.fail('connect timed out'),
      queued: undefined,
    };
    clock.timer(atMs, () => api.connect(req, false));
  };
  send(0, 0); // dropped at once: error path 0–400
  send(800, 0); // 800–1200: its 0.4 s count in the second bucket, when the path ends
  send(1300, undefined); // worked
  await clock.run(new Promise<void>((resolve) => clock.timer(3500, resolve)));
  const s = await series.stop();
  assert.deepEqual(answers, [503, 503, 200]);
  assert.deepEqual(s.extra!['error_path_seconds_deadline'], [0.4, 0.4, 0]);
  // Sampled at each bucket's end: at 1 s the second drop's error path holds the worker.
  assert.deepEqual(s.busyWorkers, [1, 0, 0]);
});
