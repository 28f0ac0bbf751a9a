import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { simulatedMap, type MapOptions } from './map.js';

// The map's cells on worker threads (--jobs 2, each with the simulator's young generation)
// give the rows the in-process, one-at-a-time map gives (--jobs 1).
const FILE = fileURLToPath(new URL('../../../experiments/retry-storm.yaml', import.meta.url));
const WORKER = new URL('../cli/simWorker.js', import.meta.url);

test('a map on two threads has the rows of the map made in this thread', async () => {
  const base: MapOptions = { rates: [60, 280], durationsMs: [5000, 2000], scale: 0.4, overrides: [] };
  const serial = await simulatedMap(FILE, base);
  assert.deepEqual(
    serial.rows.map((r) => r.verdict),
    ['recovered', 'metastable', 'recovered', 'metastable'],
  );
  const threads = await simulatedMap(FILE, { ...base, jobs: 2, worker: WORKER });
  assert.deepEqual(threads.rows, serial.rows);
});
