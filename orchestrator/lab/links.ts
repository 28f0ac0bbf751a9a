import { Toxiproxy, ToxiproxyError, type Proxy, type ToxicType } from 'toxiproxy-node-client';
import { BenchError } from '../../foundation/errors.js';
import type { UndoRecipe } from './undoRecipe.js';

/**
 * The orchestrator's client for dependency links: one Toxiproxy proxy per
 * (client, dependency) edge, driven over the Toxiproxy HTTP API, so the same code
 * drives our fault proxy (local runtime) and the real Toxiproxy (Docker runtime).
 * Wraps toxiproxy-node-client; every fault it applies comes with the recipe that
 * undoes it without this object, for the fault journal.
 */

export interface LinkSpec {
  /** Proxy name, e.g. "api-redis". */
  readonly name: string;
  /** Where the proxy listens, "127.0.0.1:0" for any free port. */
  readonly listen: string;
  /** The dependency, "127.0.0.1:6379". */
  readonly upstream: string;
}

export interface LinkState {
  readonly name: string;
  /** The address the proxy actually listens on (the port resolved). */
  readonly listen: string;
  readonly upstream: string;
  readonly enabled: boolean;
}

export type Stream = 'upstream' | 'downstream';

export interface ToxicSpec {
  /** Default `<type>_<stream>`. */
  readonly name?: string;
  /** Toxiproxy's types, and `loss`, metabench's fault proxy's own (services/faultproxy/toxics/loss.ts). */
  readonly type: Exclude<ToxicType, 'down'> | 'loss';
  /** upstream = client → dependency bytes, downstream = the replies (default). */
  readonly stream?: Stream;
  /** Share of connections affected, 0..1 (default 1). */
  readonly toxicity?: number;
  /** Integers; units per type: latency/jitter ms, rate KB/s, timeout ms, bytes… */
  readonly attributes: Readonly<Record<string, number>>;
}

export interface ToxicState {
  readonly name: string;
  readonly type: string;
  readonly stream: string;
  readonly toxicity: number;
  readonly attributes: Readonly<Record<string, number>>;
}

/** What the triggers do to a link (orchestrator/trigger/link.ts): LinkClient over HTTP, or the simulation's links. */
export interface LinkControl {
  listToxics(link: string): Promise<ToxicState[]>;
  addToxic(link: string, spec: ToxicSpec): Promise<{ toxic: ToxicState; undo: UndoRecipe }>;
  removeToxic(link: string, name: string): Promise<void>;
  disable(link: string): Promise<UndoRecipe>;
  enable(link: string): Promise<void>;
  removeToxicRecipe(link: string, toxic: string): UndoRecipe;
  enableRecipe(link: string): UndoRecipe;
}

export class LinkClient implements LinkControl {
  private readonly tp: Toxiproxy;

  /** `apiUrl`: the fault proxy's API, e.g. http://127.0.0.1:8474 */
  constructor(readonly apiUrl: string) {
    this.tp = new Toxiproxy(apiUrl.replace(/\/+$/, ''));
  }

  /** The server's version ("2.12.0"). */
  async version(): Promise<string> {
    const text = await this.call('ask the version', () => this.tp.getVersion());
    try {
      return String((JSON.parse(text) as { version: unknown }).version);
    } catch {
      return text.trim(); // Toxiproxy before 2.7 answered plain text
    }
  }

  /**
   * Creates the link, or keeps it if one with the same name, listen and upstream exists
   * (its toxics stay): Toxiproxy's populate semantics, so a restarted orchestrator can
   * call it again.
   */
  async ensureLink(spec: LinkSpec): Promise<LinkState> {
    const proxies = await this.call(`create link ${spec.name}`, () =>
      this.tp.populate([{ name: spec.name, listen: spec.listen, upstream: spec.upstream }]),
    );
    const p = proxies[spec.name];
    if (!p) throw new BenchError('E_LAB', `link ${spec.name}: the fault proxy did not return it`);
    return state(p);
  }

  /**
   * Points the link at another upstream, keeping its listen address, its toxics and whether
   * it is enabled (a partitioned link stays down); its open connections close. The swarm lab
   * re-points the api link at a replica the engine restarted (SwarmLab.start).
   */
  async repoint(name: string, upstream: string): Promise<void> {
    const p = await this.proxy(name);
    if (p.upstream === upstream) return;
    await this.call(`point link ${name} at ${upstream}`, () =>
      p.update({ enabled: p.enabled, listen: p.listen, upstream }),
    );
  }

  async get(name: string): Promise<LinkState> {
    return state(await this.proxy(name));
  }

  async listToxics(name: string): Promise<ToxicState[]> {
    // toxiproxy-node-client has no call for GET /proxies/{name}/toxics; its http client does.
    const res = await this.call(`list the toxics of ${name}`, () =>
      this.tp.getApi().get(`${this.tp.host}/proxies/${encodeURIComponent(name)}/toxics`),
    );
    return res.data as ToxicState[];
  }

  /** Adds a toxic; returns it and the recipe that removes it. */
  async addToxic(link: string, spec: ToxicSpec): Promise<{ toxic: ToxicState; undo: UndoRecipe }> {
    const stream = spec.stream ?? 'downstream';
    const body = {
      name: spec.name ?? `${spec.type}_${stream}`,
      // toxiproxy-node-client types only Toxiproxy's own toxics; the API takes any name.
      type: spec.type as ToxicType,
      stream,
      toxicity: spec.toxicity ?? 1,
      attributes: { ...spec.attributes },
    };
    const p = await this.proxy(link);
    const t = await this.call(`add ${spec.type} to link ${link}`, () => p.addToxic(body));
    return { toxic: toxicState(t.toJson()), undo: this.removeToxicRecipe(link, t.name) };
  }

  /** Changes a toxic's attributes (merged) and/or toxicity on live connections. */
  async updateToxic(
    link: string,
    name: string,
    change: { attributes?: Readonly<Record<string, number>>; toxicity?: number },
  ): Promise<ToxicState> {
    const p = await this.proxy(link);
    const t = await this.call(`find toxic ${name} of link ${link}`, () =>
      p.getToxic<Record<string, number>>(name),
    );
    const body = {
      ...t.toJson(),
      attributes: { ...t.attributes, ...change.attributes },
      toxicity: change.toxicity ?? t.toxicity,
    };
    const updated = await this.call(`update toxic ${name} of link ${link}`, () => t.update(body));
    return toxicState(updated.toJson());
  }

  async removeToxic(link: string, name: string): Promise<void> {
    const p = await this.proxy(link);
    const t = await this.call(`find toxic ${name} of link ${link}`, () => p.getToxic(name));
    await this.call(`remove toxic ${name} of link ${link}`, () => t.remove());
  }

  /**
   * Takes the link down: new connections are refused and open ones are closed.
   * Returns the recipe that brings it back.
   */
  async disable(name: string): Promise<UndoRecipe> {
    await this.setEnabled(name, false);
    return this.enableRecipe(name);
  }

  async enable(name: string): Promise<void> {
    await this.setEnabled(name, true);
  }

  /** Removes every toxic and re-enables every link. */
  async reset(): Promise<void> {
    await this.call('reset the fault proxy', () => this.tp.reset());
  }

  removeToxicRecipe(link: string, toxic: string): UndoRecipe {
    return {
      kind: 'http',
      method: 'DELETE',
      url: `${this.tp.host}/proxies/${encodeURIComponent(link)}/toxics/${encodeURIComponent(toxic)}`,
      what: `remove toxic ${toxic} from link ${link}`,
    };
  }

  enableRecipe(link: string): UndoRecipe {
    return {
      kind: 'http',
      method: 'POST',
      url: `${this.tp.host}/proxies/${encodeURIComponent(link)}`,
      body: { enabled: true },
      what: `re-enable link ${link}`,
    };
  }

  private async setEnabled(name: string, enabled: boolean): Promise<void> {
    const p = await this.proxy(name);
    await this.call(`${enabled ? 'enable' : 'disable'} link ${name}`, () =>
      p.update({ enabled, listen: p.listen, upstream: p.upstream }),
    );
  }

  private proxy(name: string): Promise<Proxy> {
    return this.call(`find link ${name}`, () => this.tp.get(encodeURIComponent(name)));
  }

  /** Runs one client call; its failures become a BenchError saying what was being done. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof ToxiproxyError || err instanceof TypeError)
        throw new BenchError('E_LAB', `fault proxy at ${this.apiUrl}: could not ${what}: ${err.message}`);
      throw err;
    }
  }
}

function state(p: Proxy): LinkState {
  return { name: p.name, listen: p.listen, upstream: p.upstream, enabled: p.enabled };
}

function toxicState(t: {
  name: string;
  type: string;
  stream: string;
  toxicity: number;
  attributes: unknown;
}): ToxicState {
  return {
    name: t.name,
    type: t.type,
    stream: t.stream,
    toxicity: t.toxicity,
    attributes: t.attributes as Record<string, number>,
  };
}
