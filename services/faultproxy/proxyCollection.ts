import { decodeStruct, decodeStructArray, goBool, goString_, goStruct, type GoStruct } from './goJson.js';
import {
  ApiError,
  ErrBadRequestBody,
  ErrMissingField,
  ErrProxyAlreadyExists,
  ErrProxyNotFound,
  joinError,
} from './errors.js';
import type { LinkDeps } from './link.js';
import { Mutex } from './mutex.js';
import { Proxy } from './proxy.js';
import { parseBody } from './toxicCollection.js';

const loggerStruct: GoStruct = { name: 'Logger', typeName: 'zerolog.Logger', fields: [] };

/** The body of create and update: Toxiproxy's Proxy struct. */
const proxyStruct: GoStruct = {
  name: 'Proxy',
  typeName: 'toxiproxy.Proxy',
  fields: [
    { json: 'name', type: goString_ },
    { json: 'listen', type: goString_ },
    { json: 'upstream', type: goString_ },
    { json: 'enabled', type: goBool },
    { json: 'Logger', type: goStruct(loggerStruct) },
  ],
};

/** One element of populate's body: Proxy embedded, with a nullable `enabled`. */
const populateItemStruct: GoStruct = { ...proxyStruct, name: '' };
const populateTypeName = 'struct { toxiproxy.Proxy; Enabled *bool "json:\\"enabled\\"" }';

/** A type, not an interface, so that decodeStruct may fill it as a plain record. */
export type ProxyInput = {
  name: string;
  listen: string;
  upstream: string;
  enabled: boolean;
};

/** Decodes a create or update body over `defaults`; throws "bad request body: …". */
export function decodeProxyBody(body: string, defaults: ProxyInput): ProxyInput {
  const node = parseBody(body);
  const input: ProxyInput = { ...defaults };
  // decodeStruct stores proxyStruct's fields with their Go types: the strings and the bool
  // ProxyInput declares (and a Logger object, which nothing reads).
  const err = decodeStruct(node, proxyStruct, input);
  if (err) throw joinError(err, ErrBadRequestBody);
  return input;
}

export interface PopulateResult {
  proxies: Proxy[] | null;
  error: ApiError | undefined;
}

/**
 * Every proxy of the server, by name. Adding, replacing and removing are serialized;
 * reading needs no lock.
 */
export class ProxyCollection {
  private readonly proxies = new Map<string, Proxy>();
  private readonly lock = new Mutex();

  constructor(private readonly deps: LinkDeps) {}

  newProxy(name: string, listen: string, upstream: string): Proxy {
    return new Proxy(name, listen, upstream, this.deps);
  }

  /** By name, sorted (Go marshals map keys sorted). */
  sorted(): Proxy[] {
    return [...this.proxies.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  all(): Proxy[] {
    return [...this.proxies.values()];
  }

  get(name: string): Proxy {
    const p = this.proxies.get(name);
    if (!p) throw ErrProxyNotFound;
    return p;
  }

  /** Adds a proxy, starting it when `start`; 409 if the name is taken. A proxy that fails to start is not added. */
  add(proxy: Proxy, start: boolean): Promise<void> {
    return this.lock.run(async () => {
      if (this.proxies.has(proxy.name)) throw ErrProxyAlreadyExists;
      if (start) await proxy.start();
      this.proxies.set(proxy.name, proxy);
    });
  }

  remove(name: string): Promise<void> {
    return this.lock.run(async () => {
      const p = this.get(name);
      await p.stop();
      this.proxies.delete(name);
    });
  }

  /** Stops every proxy (server shutdown). */
  async stopAll(): Promise<void> {
    await Promise.all(this.all().map((p) => p.stop()));
  }

  /**
   * POST /populate and -config: every entry is checked first (nothing happens if one
   * lacks a name or upstream); then each is added, or replaces a same-named proxy
   * whose resolved addresses differ (an identical one is kept, toxics, `enabled` and
   * all). Not transactional: on a listen failure, those added so far stay.
   */
  populateJson(body: string): Promise<PopulateResult> {
    return this.lock.run(async () => {
      let items: Record<string, unknown>[];
      try {
        const node = parseBody(body);
        const decoded = decodeStructArray(node, populateItemStruct, `[]${populateTypeName}`, () => ({
          name: '',
          listen: '',
          upstream: '',
        }));
        if (decoded.error) throw joinError(decoded.error, ErrBadRequestBody);
        items = decoded.items;
      } catch (err) {
        return { proxies: null, error: err as ApiError };
      }
      for (const [i, item] of items.entries()) {
        if (!item.name) return { proxies: null, error: joinError(`name at proxy ${i + 1}`, ErrMissingField) };
        if (!item.upstream)
          return { proxies: null, error: joinError(`upstream at proxy ${i + 1}`, ErrMissingField) };
      }
      const done: Proxy[] = [];
      for (const item of items) {
        const proxy = this.newProxy(item.name as string, item.listen as string, item.upstream as string);
        const start = item.enabled === undefined ? true : (item.enabled as boolean);
        try {
          const existing = this.proxies.get(proxy.name);
          if (existing && !existing.differs(proxy)) {
            done.push(existing);
            continue;
          }
          if (existing) await existing.stop();
          if (start) await proxy.start();
          this.proxies.set(proxy.name, proxy);
          done.push(proxy);
        } catch (err) {
          const e = err instanceof ApiError ? err : new ApiError((err as Error).message, 500);
          return { proxies: done, error: e };
        }
      }
      return { proxies: done, error: undefined };
    });
  }
}
