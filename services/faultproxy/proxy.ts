import { connect, createServer, type Server, type Socket } from 'node:net';
import { goJsonString } from './goJson.js';
import { isWildcard, joinHostPort, listenErrorText, nodeHost, normalizeAddr, splitHostPort } from './addr.js';
import { Connection, type LinkDeps } from './link.js';
import { Mutex } from './mutex.js';
import { toxicJson, ToxicCollection } from './toxicCollection.js';

export class ProxyAlreadyStarted extends Error {
  constructor() {
    super('Proxy already started');
  }
}

export interface ProxyAddrs {
  listen: string;
  upstream: string;
}

/**
 * A named TCP proxy: it listens on `listen` and joins every accepted client to a new
 * connection to `upstream`, through its toxics. A disabled proxy has no listener (new
 * connections are refused) and no connections (disabling closes them).
 */
export class Proxy {
  enabled = false;
  readonly toxics: ToxicCollection;
  private server: Server | undefined;
  private readonly conns = new Set<Connection>();
  private readonly lock = new Mutex();

  constructor(
    readonly name: string,
    public listen: string,
    public upstream: string,
    deps: LinkDeps,
  ) {
    this.toxics = new ToxicCollection(deps);
  }

  /** Starts listening; throws ProxyAlreadyStarted, or an Error worded like Go's listen error. */
  start(): Promise<void> {
    return this.lock.run(() => this.startLocked());
  }

  stop(): Promise<void> {
    return this.lock.run(async () => this.stopLocked());
  }

  /**
   * PATCH /proxies/{name}: a different (resolved) listen or upstream restarts the
   * proxy, closing its connections; `enabled` starts or stops it.
   */
  update(input: ProxyAddrs & { enabled: boolean }): Promise<void> {
    return this.lock.run(async () => {
      if (this.differs(input)) {
        this.stopLocked();
        this.listen = input.listen;
        this.upstream = input.upstream;
      }
      if (input.enabled !== this.enabled) {
        if (input.enabled) await this.startLocked();
        else this.stopLocked();
      }
    });
  }

  /** Whether `other` names a different listen or upstream address once resolved. */
  differs(other: ProxyAddrs): boolean {
    return (
      normalizeAddr(other.listen) !== normalizeAddr(this.listen) ||
      normalizeAddr(other.upstream) !== normalizeAddr(this.upstream)
    );
  }

  /** The proxy as the API shows it, toxics included (key order as Toxiproxy marshals it). */
  toJson(): string {
    return (
      `{"name":${goJsonString(this.name)},"listen":${goJsonString(this.listen)},` +
      `"upstream":${goJsonString(this.upstream)},"enabled":${this.enabled},"Logger":{},` +
      `"toxics":[${this.toxics.list().map(toxicJson).join(',')}]}`
    );
  }

  private async startLocked(): Promise<void> {
    if (this.enabled) throw new ProxyAlreadyStarted();
    const addr = splitHostPort(this.listen);
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: true, noDelay: true });
    server.on('connection', (client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => reject(new Error(listenErrorText(addr, err))));
      server.listen({ host: nodeHost(addr.host), port: addr.port }, () => resolve());
    });
    server.on('error', (err) => process.stderr.write(`faultproxy: proxy ${this.name}: ${err.message}\n`));
    const a = server.address();
    if (a && typeof a === 'object')
      this.listen = joinHostPort(isWildcard(addr.host) ? '::' : a.address, a.port);
    this.server = server;
    this.enabled = true;
  }

  private stopLocked(): void {
    if (!this.enabled) return;
    this.enabled = false;
    this.server?.close();
    this.server = undefined;
    for (const c of this.conns) c.close();
    this.conns.clear();
  }

  private accept(client: Socket): void {
    client.on('error', () => {});
    let host: string;
    let port: number;
    try {
      ({ host, port } = splitHostPort(this.upstream, 'dial'));
    } catch {
      client.destroy();
      return;
    }
    // Resolved per connection, as Toxiproxy dials: a restarted upstream with a new address is found.
    const upstream = connect({
      host: host === '' ? 'localhost' : host,
      port,
      noDelay: true,
      allowHalfOpen: true,
    });
    let connected = false;
    upstream.on('error', () => {
      if (!connected) client.destroy(); // Toxiproxy closes the client when it cannot reach the upstream
    });
    client.once('close', () => {
      if (!connected) upstream.destroy();
    });
    upstream.once('connect', () => {
      connected = true;
      if (client.destroyed || !this.enabled) {
        upstream.destroy();
        client.destroy();
        return;
      }
      upstream.pause();
      const conn = new Connection(client, upstream, (c) => this.conns.delete(c));
      this.conns.add(conn);
      this.toxics.startConnection(conn, client, upstream);
    });
  }
}
