import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { forward, type PipeEnds } from './forward.js';

// The port-forward over real loopback sockets, with the real pipe (services/control/pipe.ts) as
// a child process standing in for the `docker exec` that carries it on swarm: its stdin and
// stdout are what the exec's hijacked stream carries.

const PIPE = fileURLToPath(new URL('../../../services/control/pipe.js', import.meta.url));

/** The pipe to host:port as a child process; `errors` collects what it says on stderr. */
function childPipe(port: number, errors: string[] = []): () => Promise<PipeEnds> {
  return () => {
    const child = spawn(process.execPath, [PIPE, '127.0.0.1', String(port)], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    child.stderr.on('data', (d: Buffer) => errors.push(d.toString().trim()));
    return Promise.resolve({ input: child.stdin, output: child.stdout, stop: () => child.kill() });
  };
}

/** A server that answers, once the client has ended its side, with everything it sent in upper case. */
async function shouter(): Promise<{ server: Server; port: number }> {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    let got = '';
    s.on('data', (d: Buffer) => (got += d.toString()));
    s.on('end', () => s.end(got.toUpperCase()));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/** Sends `text`, ends its side, and returns all it reads until the far side closes. */
async function ask(address: string, text: string): Promise<string> {
  const [host, port] = address.split(':');
  const s = connect({ host: host!, port: Number(port), allowHalfOpen: true });
  let got = '';
  s.on('data', (d: Buffer) => (got += d.toString()));
  await once(s, 'connect');
  s.end(text);
  await once(s, 'close');
  return got;
}

test('forward: each connection gets its own pipe; a client’s half-close reaches the service and its reply comes back', async () => {
  const { server, port } = await shouter();
  const f = await forward(childPipe(port));
  try {
    assert.match(f.address, /^127\.0\.0\.1:\d+$/);
    const replies = await Promise.all(['one', 'two', 'three'].map((t) => ask(f.address, t)));
    assert.deepEqual(replies, ['ONE', 'TWO', 'THREE']);
    // A large message, in both directions, whole.
    const big = 'x'.repeat(1 << 20);
    assert.equal(await ask(f.address, big), big.toUpperCase());
  } finally {
    await f.close();
    server.close();
  }
});

test('forward: a service that refuses closes the client’s connection and the pipe says why; after close() nothing listens', async () => {
  const { server, port } = await shouter();
  server.close(); // the port is free again: connecting to it is refused
  await once(server, 'close');
  const errors: string[] = [];
  const f = await forward(childPipe(port, errors));
  assert.equal(await ask(f.address, 'anyone?'), '');
  for (let i = 0; i < 100 && errors.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.match(errors.join('\n'), new RegExp(`^pipe: 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED`));
  await f.close();
  const [host, p] = f.address.split(':');
  const s = connect({ host: host!, port: Number(p) });
  const [err] = (await once(s, 'error')) as [NodeJS.ErrnoException];
  assert.equal(err.code, 'ECONNREFUSED');
});

test('forward: a pipe that cannot be opened closes the client’s connection and is reported', async () => {
  const notes: string[] = [];
  const f = await forward(
    () => Promise.reject(new Error('no such container')),
    (m) => notes.push(m),
  );
  try {
    assert.equal(await ask(f.address, 'hello'), '');
    assert.deepEqual(notes, ['forward: cannot open a pipe: no such container']);
  } finally {
    await f.close();
  }
});

test('pipe without arguments: idles until SIGTERM, then exits 0 (the control service’s main process)', async () => {
  const child = spawn(process.execPath, [PIPE], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(child.exitCode, null, 'still running');
  child.kill('SIGTERM');
  const [code] = (await once(child, 'exit')) as [number | null];
  assert.equal(code, 0);
});
