import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Agent } from 'node:http';
import { Duplex } from 'node:stream';

/**
 * An ssh:// engine reached the way the docker CLI reaches it: the Engine API over the stdio of
 * `ssh [-l user] [-p port] -- host docker system dial-stdio`, run by the system ssh, so
 * ~/.ssh/config (Host aliases, IdentityFile, ProxyJump…), key files, the agent and
 * known_hosts all apply, as they do for `docker stack deploy` on the same DOCKER_HOST.
 */

/** The ssh command line for an ssh://[user@]host[:port] engine (the docker CLI's own arguments). */
export function sshDialArgs(sshUrl: string): string[] {
  const u = new URL(sshUrl);
  return [
    '-o',
    'ConnectTimeout=30',
    '-T',
    ...(u.username ? ['-l', decodeURIComponent(u.username)] : []),
    ...(u.port ? ['-p', u.port] : []),
    '--',
    u.hostname,
    'docker',
    'system',
    'dial-stdio',
  ];
}

/**
 * One Engine API connection: a child ssh's stdin and stdout as the socket http speaks over.
 * It has the net.Socket methods http's keep-alive agent calls (ref, unref, setKeepAlive,
 * setTimeout), so an idle connection does not hold the process open and is reused by the
 * next request instead of a fresh ssh handshake per call.
 */
class SshStdioSocket extends Duplex {
  timeout = 0;
  private timer: NodeJS.Timeout | undefined;
  private stderr = '';

  constructor(private readonly child: ChildProcess) {
    super();
    const out = child.stdout!;
    out.on('data', (d: Buffer) => {
      this.touch();
      if (!this.push(d)) out.pause();
    });
    child.stderr!.on('data', (d: Buffer) => {
      // The last words are the ones that say why (Permission denied, Host key verification failed…).
      this.stderr = (this.stderr + d.toString()).slice(-2000);
    });
    child.stdin!.on('error', () => undefined);
    child.on('error', (err) => this.destroy(err));
    // The end of the stream waits for ssh's exit (after its stdio closed): a clean exit ends the
    // connection (so the agent drops it, not reuses a dead one); any other is an error in ssh's
    // own words (Permission denied…), which is why a request failed, where an early end of
    // its stdout would be a bare "socket hang up".
    child.on('close', (code, signal) => {
      if (this.destroyed) return;
      if (code === 0) {
        this.push(null);
        this.end();
        return;
      }
      const why = this.stderr.trim().split('\n').filter(Boolean).slice(-2).join(' | ');
      this.destroy(
        new Error(
          `ssh ${child.spawnargs.slice(1).join(' ')} exited with ${code ?? signal}${why ? `: ${why}` : ''}`,
        ),
      );
    });
  }

  override _read(): void {
    this.child.stdout!.resume();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.touch();
    // A write error (EPIPE: ssh already gone) is not the reason: ssh's exit, which follows, says it.
    this.child.stdin!.write(chunk, () => cb());
  }

  override _final(cb: (err?: Error | null) => void): void {
    const stdin = this.child.stdin!;
    if (stdin.destroyed || stdin.writableFinished) cb();
    else stdin.end(() => cb());
  }

  override _destroy(err: Error | null, cb: (err: Error | null) => void): void {
    clearTimeout(this.timer);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
    cb(err);
  }

  /** As net.Socket's: 0 turns it off and takes `cb` back off (http calls it once per request). */
  setTimeout(ms: number, cb?: () => void): this {
    this.timeout = ms;
    if (cb && ms === 0) this.removeListener('timeout', cb);
    else if (cb) this.once('timeout', cb);
    this.touch();
    return this;
  }

  private touch(): void {
    clearTimeout(this.timer);
    if (this.timeout > 0) this.timer = setTimeout(() => this.emit('timeout'), this.timeout).unref();
  }

  setKeepAlive(): this {
    return this;
  }

  setNoDelay(): this {
    return this;
  }

  ref(): this {
    for (const h of this.handles()) h.ref();
    return this;
  }

  unref(): this {
    for (const h of this.handles()) h.unref();
    return this;
  }

  private handles(): { ref(): void; unref(): void }[] {
    const c = this.child;
    return [c, c.stdin, c.stdout, c.stderr].filter(Boolean) as unknown as { ref(): void; unref(): void }[];
  }
}

/**
 * The http.Agent that dockerode's requests take for an ssh:// engine: each connection is a
 * `ssh … docker system dial-stdio`, kept alive between requests (idle ones are closed after
 * 30 s; the ssh process ends with its stdin at the latest when this process exits).
 * `ssh` is the one on PATH, as for the docker CLI.
 */
export function sshDialAgent(sshUrl: string): Agent {
  const args = sshDialArgs(sshUrl);
  const agent = new Agent({ keepAlive: true, timeout: 30_000 });
  // http.Agent calls createConnection(options, callback); a stream returned synchronously is used as the socket.
  (agent as unknown as { createConnection: () => Duplex }).createConnection = () =>
    new SshStdioSocket(spawn('ssh', args, { stdio: ['pipe', 'pipe', 'pipe'] }));
  return agent;
}

/**
 * The host an ssh:// engine's connection goes to, as ssh resolves it (`ssh -G`: a Host
 * alias's HostName from ~/.ssh/config); undefined when ssh cannot say.
 */
export function sshHostName(sshUrl: string): string | undefined {
  const args = sshDialArgs(sshUrl);
  // The dial arguments up to the host, without the remote command: what ssh would connect to.
  const r = spawnSync('ssh', ['-G', ...args.slice(0, args.indexOf('--') + 2)], {
    encoding: 'utf8',
    timeout: 10_000,
  });
  return r.status === 0 ? /^hostname (\S+)$/m.exec(r.stdout)?.[1] : undefined;
}
