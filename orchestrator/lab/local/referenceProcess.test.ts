import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { listening } from './referenceProcess.js';

test('listening: a socket listening on 127.0.0.1 is found in the kernel table, and not once it is closed', async () => {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    assert.equal(listening('127.0.0.1', port), true);
    assert.equal(listening('127.0.0.2', port), false, 'another address');
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  assert.equal(listening('127.0.0.1', port), false);
  assert.equal(listening('127.0.0.1', port, '/nonexistent/tcp'), false, 'no table: not listening');
});
