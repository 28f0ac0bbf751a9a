import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRng } from '../foundation/rng.js';
import { SimClock } from './clock.js';
import { SimLink, type LinkConn } from './link.js';

// The simulated link's request-level loss, as the fault proxy's loss toxic
// (services/faultproxy/toxics/loss.ts) behaves over TCP: a lost message stalls its
// connection's direction, which stays open until the toxic goes.

test('loss on a simulated link: each request lost with its probability, its connection stalled behind it', async () => {
  const clock = new SimClock();
  const link = new SimLink('postgres', clock, seededRng(3, 'link'));
  link.addToxic({ name: 'loss', type: 'loss', stream: 'upstream', attributes: { probability: 0.05 } });
  const closed: string[] = [];
  const conns: LinkConn[] = [];
  const first = new Set<number>();
  const second = new Set<number>();
  // 4,000 connections each send a request, then a second one 10 ms later.
  for (let i = 0; i < 4000; i++) {
    const c = link.connect((why) => closed.push(`${i}:${why}`))!;
    conns.push(c);
    link.send(c, 'upstream', 100, () => first.add(i));
    clock.timer(10, () => link.send(c, 'upstream', 100, () => second.add(i)));
  }
  // Replies are not touched: the toxic is on the requests' direction.
  let replies = 0;
  for (const c of conns) link.send(c, 'downstream', 100, () => replies++);
  await clock.run(clock.sleepUntil(1000));
  const firstLost = conns.length - first.size;
  // Expected 200, SD sqrt(4000 × 0.05 × 0.95) = 13.8.
  assert.ok(Math.abs(firstLost - 200) <= 3 * 13.8, `first requests lost: ${firstLost} of 4000`);
  // A connection whose first request was lost never delivers its second.
  for (const i of second) assert.ok(first.has(i), `connection ${i} delivered past its hole`);
  const secondLost = first.size - second.size;
  assert.ok(
    secondLost > 0 && Math.abs(secondLost - 0.05 * first.size) <= 3 * Math.sqrt(first.size * 0.05 * 0.95),
  );
  assert.equal(replies, 4000);
  assert.equal(closed.length, 0, 'stalled connections stay open');
  // Removing the toxic closes exactly the stalled ones.
  link.removeToxic('loss');
  assert.equal(closed.length, conns.length - second.size);
  assert.ok(closed.every((s) => s.endsWith(':timeout-removed')));
});
