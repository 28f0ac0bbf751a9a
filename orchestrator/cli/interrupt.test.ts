import { test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { onInterrupt } from './interrupt.js';

test('the first SIGTERM aborts the command’s stop signal; dispose removes the handlers', async () => {
  const before = { int: process.listenerCount('SIGINT'), term: process.listenerCount('SIGTERM') };
  const interrupt = onInterrupt();
  try {
    assert.equal(process.listenerCount('SIGTERM'), before.term + 1);
    assert.equal(process.listenerCount('SIGINT'), before.int + 1);
    assert.equal(interrupt.stop.aborted, false);
    // A signal arrives asynchronously: keep the event loop alive until it does.
    const alive = setTimeout(() => undefined, 10_000);
    process.kill(process.pid, 'SIGTERM');
    await once(interrupt.stop, 'abort');
    clearTimeout(alive);
    assert.equal(interrupt.stop.aborted, true);
  } finally {
    interrupt.dispose();
  }
  assert.equal(process.listenerCount('SIGTERM'), before.term);
  assert.equal(process.listenerCount('SIGINT'), before.int);
});
