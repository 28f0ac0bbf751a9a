import { test } from 'node:test';
import assert from 'node:assert/strict';
import { VirtualClock } from '../../foundation/clock.js';
import { ScriptedTransport } from '../../test/helpers/fakeTransport.js';
import type { Attempt } from '../outcome.js';
import { overReplicas, replicasOf } from './replicas.js';

const origin = { id: 1, intendedMs: 0, deadlineMs: Infinity };

test('one endpoint is the transport itself: a lab without replicas sends as before', () => {
  const t = new ScriptedTransport(new VirtualClock(), () => 1);
  assert.equal(overReplicas([t]), t);
  assert.equal(replicasOf(t), 1);
  assert.throws(() => overReplicas([]), /at least one endpoint/);
});

test("an attempt goes to its replica's endpoint; an index it does not reach throws", async () => {
  const clock = new VirtualClock();
  const ends = [0, 1, 2].map(() => new ScriptedTransport(clock, () => 5));
  const t = overReplicas(ends);
  assert.equal(replicasOf(t), 3);
  const send = (a: Attempt) => t.send(a, undefined, new AbortController().signal);
  const sent = [
    send({ origin, number: 1, replica: 2 }),
    send({ origin, number: 2 }),
    send({ origin, number: 3, replica: 1 }),
  ];
  await clock.runUntilIdle();
  assert.deepEqual(
    (await Promise.all(sent)).map((r) => r.kind),
    ['ok', 'ok', 'ok'],
  );
  // No replica: replica 0.
  assert.deepEqual(
    ends.map((e) => e.sent.map((a) => a.number)),
    [[2], [3], [1]],
  );
  assert.throws(
    () => send({ origin, number: 4, replica: 3 }),
    /replica 3 does not exist: this transport reaches 3/,
  );
  // The scripted endpoints count no connections, so neither does the whole.
  assert.equal(t.openConnections, undefined);
  await t.close();
});
