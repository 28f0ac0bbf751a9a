import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../../../foundation/rng.js';
import { toxicHarness } from '../../../test/helpers/toxicHarness.js';
import { bandwidthKind } from './bandwidth.js';
import { latencyKind, LatencyToxic } from './latency.js';
import { limitDataKind } from './limitData.js';
import { lossKind, LossToxic } from './loss.js';
import { resetPeerKind } from './resetPeer.js';
import { slicerKind, SlicerToxic } from './slicer.js';
import { slowCloseKind } from './slowClose.js';
import { timeoutKind, TimeoutToxic } from './timeout.js';
import { toxicKind, toxicKinds } from './registry.js';
import type { ToxicKind } from './Toxic.js';

const k = (kind: unknown) => kind as ToxicKind;

test('latency delays each chunk relative to its own arrival, not behind the previous one', async () => {
  const h = toxicHarness(k(latencyKind), { latency: 100 });
  await h.send('a', 0);
  await h.send('b', 10);
  await h.send('c', 50);
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.out, [
    { atMs: 100, data: 'a' },
    { atMs: 110, data: 'b' },
    { atMs: 150, data: 'c' },
  ]);
});

test('latency jitter draws uniformly in [latency - jitter, latency + jitter)', async () => {
  const h = toxicHarness(k(latencyKind), { latency: 100, jitter: 20 }, { seed: 7 });
  for (let i = 0; i < 60; i++) await h.send(String(i), i * 200);
  await h.clock.advanceTo(60 * 200 + 500);
  const delays = h.out.map((o, i) => o.atMs - i * 200);
  assert.equal(delays.length, 60);
  assert.ok(
    delays.every((d) => d >= 80 && d < 120),
    `delays ${delays.join(',')}`,
  );
  assert.ok(new Set(delays).size > 10, 'jitter varies');
  const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
  assert.ok(Math.abs(mean - 100) < 5, `mean ${mean}`);
  // The draw itself, as Toxiproxy's rand.Int63n(2·jitter) − jitter.
  const t = new LatencyToxic({ latency: 10, jitter: 5 });
  assert.equal(
    t.delayMs(() => 0),
    5,
  );
  assert.equal(
    t.delayMs(() => 0.9999),
    14,
  );
});

test('an interrupted latency toxic forwards the chunk it holds instead of dropping it', async () => {
  const h = toxicHarness(k(latencyKind), { latency: 1000 });
  await h.send('held', 0);
  await h.send('queued', 5);
  assert.equal(await h.rerun(20), true);
  assert.deepEqual(h.out, [{ atMs: 20, data: 'held' }], 'the held chunk goes out at the interrupt');
  await h.clock.advanceTo(5000);
  // The re-run toxic still delays the queued chunk from its own arrival (5 + 1000).
  assert.deepEqual(h.out[1], { atMs: 1005, data: 'queued' });
});

test('toxicity 0 leaves a connection untouched; toxicity 0.5 affects about half of them', async () => {
  const none = toxicHarness(k(latencyKind), { latency: 100 }, { toxicity: 0 });
  await none.send('x', 0);
  assert.deepEqual(none.out, [{ atMs: 0, data: 'x' }]);

  let delayed = 0;
  for (let seed = 1; seed <= 200; seed++) {
    const h = toxicHarness(k(latencyKind), { latency: 100 }, { toxicity: 0.5, seed });
    await h.send('x', 0);
    if (h.out.length === 0) delayed++;
  }
  assert.ok(delayed > 70 && delayed < 130, `${delayed} of 200 connections got the toxic`);
});

test('bandwidth sends len/rate ms per chunk, in 100 ms slices when a chunk is larger', async () => {
  const h = toxicHarness(k(bandwidthKind), { rate: 10 }); // 10 KB/s = 10 bytes/ms
  await h.send('x'.repeat(500), 0);
  await h.clock.advanceTo(10_000);
  assert.deepEqual(
    h.out.map((o) => [o.atMs, o.data.length]),
    [[50, 500]],
  );
  const big = toxicHarness(k(bandwidthKind), { rate: 10 });
  await big.send('y'.repeat(2500), 0);
  await big.clock.advanceTo(10_000);
  assert.deepEqual(
    big.out.map((o) => [o.atMs, o.data.length]),
    [
      [100, 1000],
      [200, 1000],
      [250, 500],
    ],
  );
});

test('bandwidth 0 holds the data until the toxic is changed, which forwards it', async () => {
  const h = toxicHarness(k(bandwidthKind), { rate: 0 });
  await h.send('stuck', 0);
  await h.clock.advanceTo(60_000);
  assert.deepEqual(h.out, []);
  await h.rerun(60_000);
  assert.deepEqual(h.out, [{ atMs: 60_000, data: 'stuck' }]);
});

test('slow_close passes data at once and closes `delay` ms after the stream ends', async () => {
  const h = toxicHarness(k(slowCloseKind), { delay: 200 });
  await h.send('bye', 0);
  await h.end(10);
  await h.clock.advanceTo(100);
  assert.deepEqual(h.out, [{ atMs: 0, data: 'bye' }]);
  assert.equal(h.endedAtMs, undefined);
  await h.clock.advanceTo(1000);
  assert.equal(h.endedAtMs, 210);
});

test('slow_close interrupted while holding the end of stream still closes afterwards', async () => {
  const h = toxicHarness(k(slowCloseKind), { delay: 200 });
  await h.end(0);
  await h.rerun(50);
  await h.clock.advanceTo(1000);
  assert.equal(h.endedAtMs, 250);
});

test('timeout drops everything and closes once `timeout` ms pass without data', async () => {
  const h = toxicHarness(k(timeoutKind), { timeout: 100 });
  await h.send('lost', 0);
  await h.send('lost too', 50);
  await h.clock.advanceTo(1000);
  assert.deepEqual(h.out, []);
  assert.equal(h.endedAtMs, 150, 'the timer re-arms after each dropped chunk, as in Toxiproxy');

  const forever = toxicHarness(k(timeoutKind), { timeout: 0 });
  await forever.send('lost', 0);
  await forever.clock.advanceTo(3_600_000);
  assert.equal(forever.endedAtMs, undefined, 'timeout 0 never closes');
  // Removing a timeout toxic closes the connection (its cleanup).
  const t = new TimeoutToxic({ timeout: 0 });
  await forever.stub.interrupt();
  t.cleanup(forever.stub);
  assert.equal(forever.endedAtMs, 3_600_000);
});

test('reset_peer waits for the first chunk, then `timeout` ms, then closes with a reset', async () => {
  const h = toxicHarness(k(resetPeerKind), { timeout: 50 });
  await h.clock.advanceTo(500);
  assert.equal(h.endedAtMs, undefined, 'nothing happens before data flows');
  await h.send('hello', 500);
  await h.clock.advanceTo(2000);
  assert.equal(h.endedAtMs, 550);
  assert.equal(h.reset, true);
  assert.deepEqual(h.out, []);
});

test('slicer cuts a chunk into slices near the average size, `delay` µs apart, losing nothing', async () => {
  const h = toxicHarness(k(slicerKind), { average_size: 10, size_variation: 3, delay: 2000 });
  const data = Array.from({ length: 100 }, (_, i) => String.fromCharCode(65 + (i % 26))).join('');
  await h.send(data, 0);
  await h.clock.advanceTo(1000);
  assert.equal(h.out.map((o) => o.data).join(''), data);
  assert.ok(h.out.length >= 7, `${h.out.length} slices`);
  assert.ok(h.out.every((o) => o.data.length > 0 && o.data.length <= 13));
  h.out.forEach((o, i) => assert.equal(o.atMs, i * 2));

  const cuts = new SlicerToxic({ average_size: 10, size_variation: 0, delay: 0 }).cuts(0, 100, () => 0.5);
  assert.equal(cuts[0], 0);
  assert.equal(cuts[cuts.length - 1], 100);
  const r = seededRng(3);
  const free = new SlicerToxic({ average_size: 0, size_variation: 0, delay: 0 }).cuts(0, 7, () => r.next());
  assert.ok(free.length >= 2, 'average 0 does not recurse forever');
});

test('limit_data forwards up to `bytes`, then closes; the count survives an update', async () => {
  const h = toxicHarness(k(limitDataKind), { bytes: 10 });
  await h.send('123456', 0);
  await h.rerun(1);
  await h.send('abcdef', 2);
  assert.deepEqual(
    h.out.map((o) => o.data),
    ['123456', 'abcd'],
  );
  assert.equal(h.endedAtMs, 2);
});

test('the registry has exactly the toxics of Toxiproxy 2.12 and metabench’s loss, and nothing from the prototype chain', () => {
  assert.deepEqual(Object.keys(toxicKinds).sort(), [
    'bandwidth',
    'latency',
    'limit_data',
    'loss',
    'noop',
    'reset_peer',
    'slicer',
    'slow_close',
    'timeout',
  ]);
  assert.equal(toxicKind('down'), undefined);
  assert.equal(toxicKind('constructor'), undefined);
});

test('loss: a lost message stalls its direction, the connection stays open, and later messages are never delivered', async () => {
  const always = toxicHarness(k(lossKind), { probability: 1 });
  await always.send('request 1', 0);
  await always.send('request 2', 10);
  await always.clock.advanceTo(3_600_000);
  assert.deepEqual(always.out, []);
  assert.equal(always.endedAtMs, undefined, 'kept open: the client sees only its own timeout');
  await always.end(3_600_001);
  assert.equal(always.endedAtMs, 3_600_001, "the client's close goes through");

  const never = toxicHarness(k(lossKind), { probability: 0 });
  for (let i = 0; i < 50; i++) await never.send(String(i), i);
  assert.equal(never.out.length, 50);
});

test('loss: each message is lost with its probability, and the loss outlives a change of the chain', async () => {
  // 4,000 connections of one message each at 5%: 200 expected, SD sqrt(4000 × 0.05 × 0.95) = 13.8.
  let lost = 0;
  for (let seed = 1; seed <= 4000; seed++) {
    const h = toxicHarness(k(lossKind), { probability: 0.05 }, { seed });
    await h.send('m', 0);
    if (h.out.length === 0) lost++;
  }
  assert.ok(Math.abs(lost - 200) <= 3 * 13.8, `lost ${lost} of 4000`);

  // A connection that lost a message stays stalled after the toxic is re-run (an update).
  let seed = 1;
  for (; seed < 1000; seed++) {
    const h = toxicHarness(k(lossKind), { probability: 0.5 }, { seed });
    await h.send('first', 0);
    if (h.out.length > 0) continue;
    assert.equal(await h.rerun(5), true);
    for (let i = 0; i < 20; i++) await h.send(`after ${i}`, 10 + i);
    assert.deepEqual(h.out, [], 'nothing after the hole is delivered');
    break;
  }
  assert.ok(seed < 1000);
});

test('loss: removing the toxic closes the connections it stalled and leaves the others open', async () => {
  const stalled = toxicHarness(k(lossKind), { probability: 1 });
  await stalled.send('lost', 0);
  const healthy = toxicHarness(k(lossKind), { probability: 0 });
  await healthy.send('fine', 0);
  const t = new LossToxic({ probability: 1 });
  for (const h of [stalled, healthy]) {
    await h.stub.interrupt();
    t.cleanup(h.stub);
  }
  assert.equal(stalled.endedAtMs, 0);
  assert.equal(healthy.endedAtMs, undefined);
});
