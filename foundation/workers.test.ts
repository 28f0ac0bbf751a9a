import { test } from 'node:test';
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { coreToSpare, inWorkers } from './workers.js';

const WORKER = new URL('../test/helpers/spareCoreWorker.js', import.meta.url);

async function answers(items: number, jobs: number): Promise<boolean[]> {
  const out: boolean[] = [];
  await inWorkers<number, number, boolean>(
    WORKER,
    Array.from({ length: items }, (_, i) => i),
    jobs,
    (i) => i,
    new AbortController().signal,
    (_, r) => out.push(r),
  );
  return out;
}

// events.arrow's writer thread starts only where coreToSpare says a core is free: one thread
// simulating leaves the others free; a pool as wide as the machine leaves none; the main
// thread (a lab run's generator) never spares one.
test('coreToSpare: a core is spare beside one simulating thread, none beside a pool as wide as the cores or on the main thread', async () => {
  const cores = availableParallelism();
  assert.equal(coreToSpare(), false); // the main thread: a lab's generator, or a small simulation
  assert.deepEqual(await answers(2, 1), [cores > 1, cores > 1]);
  assert.deepEqual(await answers(cores, cores), Array<boolean>(cores).fill(false));
  // A pool is as wide as its items when they are fewer than its jobs.
  assert.deepEqual(await answers(1, cores + 1), [cores > 1]);
});
