import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LiveSet } from './liveSet.js';

interface Item {
  readonly id: number;
  liveSlot?: number | undefined;
}

test('a LiveSet holds what a Set would, in the same order, through adds, re-adds, deletes and compactions', () => {
  const live = new LiveSet<Item>();
  const ref = new Set<Item>();
  const items: Item[] = Array.from({ length: 3000 }, (_, id) => ({ id }));
  let seed = 7;
  const rnd = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  for (let k = 0; k < 100_000; k++) {
    const it = items[Math.floor(rnd() * items.length)]!;
    // Mostly the oldest goes first, as attempts time out in the order they were sent.
    const first = ref.values().next().value;
    if (rnd() < 0.5) {
      live.add(it);
      ref.add(it);
    } else {
      const gone = first !== undefined && rnd() < 0.7 ? first : it;
      live.delete(gone);
      ref.delete(gone);
    }
    if (k % 997 === 0) assert.deepEqual(live.values(), [...ref]);
    assert.equal(live.size, ref.size);
  }
  assert.deepEqual(live.drain(), [...ref]);
  assert.equal(live.size, 0);
  assert.ok(items.every((i) => i.liveSlot === undefined || i.liveSlot === -1));
});

test('deleting what a LiveSet does not hold does nothing', () => {
  const live = new LiveSet<Item>();
  const a: Item = { id: 1 };
  const b: Item = { id: 2 };
  live.delete(a);
  live.add(b);
  live.delete(a);
  assert.deepEqual(live.values(), [b]);
});
