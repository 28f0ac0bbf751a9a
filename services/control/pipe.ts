#!/usr/bin/env node
/**
 * The control channel's far end, run inside a container on the lab's network:
 *   node pipe.js HOST PORT   one TCP connection to HOST:PORT, its bytes on stdout, stdin's to it
 *   node pipe.js             nothing: waits for SIGTERM (the `control` service's main process)
 * The orchestrator runs the first through `docker exec` with stdin attached, once per connection
 * it forwards (orchestrator/lab/swarm/forward.ts): a service that publishes no port is reached
 * over the engine's own connection, with the engine's credentials. It imports nothing but Node's
 * own modules, so the file runs alone wherever node does (the stack ships it as a config).
 */
import { connect } from 'node:net';

const [host, port] = process.argv.slice(2);
if (host === undefined) {
  // PID 1 of its container: without a handler the kernel ignores SIGTERM and `docker stop` waits 10 s.
  for (const sig of ['SIGTERM', 'SIGINT'] as const) process.on(sig, () => process.exit(0));
  setInterval(() => undefined, 2 ** 30);
} else {
  const socket = connect({ host, port: Number(port) });
  socket.setNoDelay(true);
  socket.once('error', (err) => {
    process.stderr.write(`pipe: ${host}:${port}: ${err.message}\n`);
    process.exit(1);
  });
  // Each direction ends on its own (a client's half-close reaches the server as a FIN).
  process.stdin.pipe(socket);
  socket.pipe(process.stdout);
  socket.once('close', () => process.stdout.end(() => process.exit(0)));
}
