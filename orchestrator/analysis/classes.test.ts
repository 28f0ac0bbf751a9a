import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summarizeClasses, type ClassEvent } from './classes.js';

const windows = {
  warmup: { startMs: 0, endMs: 1000 },
  baseline: { startMs: 1000, endMs: 2000 },
  trigger: { startMs: 2000, endMs: 3000 },
  observe: { startMs: 3000, endMs: 4000 },
};

function origin(
  id: number,
  cls: number,
  intendedMs: number,
  kind: string,
  responseMs: number,
  stream?: { ttftMs: number; itlMs?: number },
): ClassEvent[] {
  return [
    { e: 'attempt', origin: id, cls, n: 1, kind, ...(stream ?? {}) },
    { e: 'outcome', origin: id, intendedMs, endMs: intendedMs + responseMs, kind },
  ];
}

test('per class and window: counts, nearest-rank percentiles, cancelled streams apart from errors', () => {
  const ev: ClassEvent[] = [];
  let id = 0;
  // Class 0 (read): 20 successes in the baseline at 10..200 ms, 1 failure; one in the warm-up.
  for (let i = 1; i <= 20; i++) ev.push(...origin(id++, 0, 1000 + i, 'ok', i * 10));
  ev.push(...origin(id++, 0, 1500, 'http-5xx', 3));
  ev.push(...origin(id++, 0, 10, 'ok', 5000));
  // Class 1 (chat): streams with TTFTs 100..1000 ms, two cancelled on purpose.
  for (let i = 1; i <= 10; i++)
    ev.push(...origin(id++, 1, 1100 + i, 'ok', 2000, { ttftMs: i * 100, itlMs: 20 }));
  ev.push(...origin(id++, 1, 1200, 'abandoned', 500, { ttftMs: 50 }));
  ev.push(...origin(id, 1, 1300, 'abandoned', 500));
  const s = summarizeClasses(ev, [{ name: 'read' }, { name: 'chat' }, { name: 'agent' }], windows);
  const read = s.classes[0]!;
  assert.equal(read.windows.baseline.origins, 21);
  assert.equal(read.windows.baseline.ok, 20);
  assert.equal(read.windows.baseline.failed, 1);
  assert.deepEqual(read.windows.baseline.failures, { 'http-5xx': 1 });
  assert.equal(read.windows.baseline.responseMs.p95, 190); // rank ceil(0.95 × 20) = 19
  assert.equal(read.windows.warmup.origins, 1);
  assert.equal(read.windows.baseline.errorRatio, 1 / 21);
  const chat = s.classes[1]!;
  assert.equal(chat.windows.baseline.cancelled, 2);
  assert.equal(chat.windows.baseline.errorRatio, 0);
  assert.equal(chat.windows.baseline.ttftMs.samples, 10, 'only successful origins');
  assert.equal(chat.windows.baseline.ttftMs.p95, 1000);
  assert.equal(chat.windows.baseline.itlMs.p50, 20);
  // A class without origins is described with empty figures (its thresholds, if any, are
  // judged with the hypothesis: no samples there is unmeasured).
  assert.deepEqual(s.classes[2]!.windows.baseline.responseMs, {
    samples: 0,
    p50: null,
    p95: null,
    p99: null,
  });
});

test('the classes section describes, it does not judge: no thresholds, no verdict', () => {
  const s = summarizeClasses(origin(0, 0, 1500, 'ok', 10), [{ name: 'a' }], windows);
  assert.deepEqual(Object.keys(s).sort(), ['classes', 'definitions']);
  assert.deepEqual(Object.keys(s.classes[0]!).sort(), ['name', 'windows']);
});
