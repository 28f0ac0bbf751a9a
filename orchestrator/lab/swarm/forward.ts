import { createServer, type AddressInfo, type Socket } from 'node:net';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type Docker from 'dockerode';

/**
 * A port-forward, as `kubectl port-forward` does it: a listener on 127.0.0.1 whose every
 * connection is carried by a pipe the caller opens (`open`). On swarm the pipe is a `docker exec`
 * of services/control/pipe.ts in the stack's control container (execPipe): the bytes travel in
 * the engine's own connection (its socket, ssh or TLS), so a service on the stack's network is
 * reached without a published port and with no credential but the engine's.
 */

/** One connection's far end: what is written to `input` reaches the service, `output` is what it sends back. */
export interface PipeEnds {
  readonly input: Writable;
  readonly output: Readable;
  /** Ends the pipe at once (the client went away). */
  stop(): void;
}

export interface Forward {
  /** host:port of the listener (always 127.0.0.1). */
  readonly address: string;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1:`port` (0: any free port) and joins each accepted connection to a fresh pipe. */
export async function forward(
  open: () => Promise<PipeEnds>,
  onError: (message: string) => void = () => undefined,
  port = 0,
): Promise<Forward> {
  const live = new Set<Socket>();
  // allowHalfOpen: a client that ends its side still gets the rest of the reply.
  const server = createServer({ allowHalfOpen: true }, (client) => {
    live.add(client);
    client.setNoDelay(true);
    client.once('close', () => live.delete(client));
    client.pause();
    open().then(
      (p) => {
        const stop = (): void => p.stop();
        client.once('close', stop);
        client.on('error', stop);
        p.input.on('error', () => client.destroy());
        p.output.on('error', () => client.destroy());
        client.pipe(p.input);
        p.output.pipe(client);
        client.resume();
      },
      (err: Error) => {
        onError(`forward: cannot open a pipe: ${err.message}`);
        client.destroy();
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    address: `127.0.0.1:${bound}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of live) c.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Where the stack's control service has the pipe (a swarm config: stack.ts). */
export const CONTROL_SCRIPT = '/metabench/control.mjs';

/**
 * The pipe as a `docker exec` of pipe.ts to host:port in `container`, stdin attached (the
 * connection hijacked), its output demultiplexed: stdout is the service's bytes, stderr the
 * pipe's own error, passed to `onError`.
 */
export function execPipe(
  docker: Docker,
  container: string,
  /** The host to dial, read at each connection when a function (an address that changes). */
  host: string | (() => string),
  port: number,
  onError: (message: string) => void = () => undefined,
): () => Promise<PipeEnds> {
  return async () => {
    const to = typeof host === 'string' ? host : host();
    const exec = await docker.getContainer(container).exec({
      Cmd: ['node', CONTROL_SCRIPT, to, String(port)],
      AttachStdin: true,
      AttachStdout: true,
      AttachStderr: true,
      Tty: false,
    });
    const stream = (await exec.start({ hijack: true, stdin: true })) as NodeJS.ReadWriteStream &
      Writable & { destroy(): void };
    const output = new PassThrough();
    const errors = new PassThrough();
    errors.on('data', (d: Buffer) => onError(`${to}:${port}: ${d.toString().trim()}`));
    docker.modem.demuxStream(stream, output, errors);
    stream.once('end', () => output.end());
    stream.once('close', () => output.end());
    return { input: stream, output, stop: () => stream.destroy() };
  };
}
