import type { Rng } from '../foundation/rng.js';
import type { SimClock } from './clock.js';
import type { ToxicSpec, ToxicState } from '../orchestrator/lab/links.js';

export type Stream = 'upstream' | 'downstream';

/**
 * The fault proxy's toxics the simulated links model. The others (slow_close, slicer,
 * limit_data) act on how bytes are cut up and when connections close, which these
 * links, carrying whole requests and replies over long-lived connections, do not model:
 * adding one is refused by name (and a spec that needs one is refused before it runs,
 * agreement.ts's simRefusals), never silently ignored.
 */
export const SIM_TOXICS = ['latency', 'bandwidth', 'timeout', 'reset_peer', 'loss'] as const;

/** A toxic the simulated link cannot model. */
export class ToxicNotModelled extends Error {}

/**
 * One connection over a simulated link (the api's end of it): the client model that
 * owns it hears about the link closing it (`onClose`), and chunks it sends come out
 * in order per direction.
 */
export class LinkConn {
  open = true;
  /** When the last chunk of each direction came out: a chunk never overtakes the one before it. */
  lastOut = { upstream: 0, downstream: 0 };
  /** Per toxic (by name), whether this connection's toxicity roll said it is affected. */
  readonly affected = new Map<string, boolean>();
  /** Loss toxics (by name) that lost a message of this connection: its stream is stalled behind the hole. */
  readonly stalled = new Set<string>();
  /** Bumped when the connection closes: deliveries of an older generation are dropped. */
  gen = 0;
  constructor(
    readonly id: number,
    readonly onClose: (why: 'partition' | 'reset' | 'timeout-removed') => void,
  ) {}
}

interface Held {
  readonly conn: LinkConn;
  readonly gen: number;
  readonly stream: Stream;
  readonly bytes: number;
  readonly deliver: () => void;
  /** Where in the chain it is (the index of the next toxic to pass). */
  readonly from: number;
  /** The toxic holding it. */
  readonly by?: string;
}

/**
 * A dependency link of the simulated api (api → redis, api → postgres), with the
 * fault proxy's toxics as the local lab has them (services/faultproxy, Toxiproxy's
 * semantics), applied per chunk in the order the toxics were added:
 *
 *   latency     each chunk comes out latency ± jitter after it went in (U[-jitter, +jitter))
 *   bandwidth   len / rate ms per chunk (rate in KB/s = bytes/ms); rate 0 holds the data
 *               until the toxic is removed, then forwards it
 *   timeout     a black hole: chunks are dropped, the connection stays open and silent;
 *               removing the toxic closes every connection it sat on
 *   reset_peer  the first chunk is dropped and the connection reset `timeout` ms later
 *   loss        each chunk (a whole request or reply here) is lost with `probability`; the
 *               connection's direction then stalls (every later chunk dropped) and stays
 *               open; removing the toxic closes the connections it stalled
 *   disabled    (partition) every connection is closed and new ones are refused
 *
 * Any other toxic type is refused (ToxicNotModelled).
 *
 * Toxicity is rolled per connection and toxic, when the toxic is added or the
 * connection opened, as the fault proxy does. Chunks are a request or a reply; their
 * size only matters to the bandwidth toxic.
 */
export class SimLink {
  enabled = true;
  private readonly toxics: (ToxicSpec & { name: string; stream: Stream; toxicity: number })[] = [];
  private readonly conns = new Set<LinkConn>();
  private held: Held[] = [];
  private nextId = 0;

  constructor(
    readonly name: string,
    private readonly clock: SimClock,
    private readonly rng: Rng,
  ) {}

  /** A new connection, or undefined when the link refuses it (partitioned). */
  connect(onClose: LinkConn['onClose']): LinkConn | undefined {
    if (!this.enabled) return undefined;
    const c = new LinkConn(this.nextId++, onClose);
    this.conns.add(c);
    for (const t of this.toxics) c.affected.set(t.name, this.rng.next() < t.toxicity);
    return c;
  }

  /** The owner closed it (or it broke); it leaves the link. */
  release(c: LinkConn): void {
    c.open = false;
    c.gen++;
    this.conns.delete(c);
  }

  /**
   * Sends one chunk; `deliver` is called when it comes out at the far end, unless the
   * connection closes first or a toxic drops it.
   */
  send(c: LinkConn, stream: Stream, bytes: number, deliver: () => void): void {
    this.pass({ conn: c, gen: c.gen, stream, bytes, deliver, from: 0 }, this.clock.now());
  }

  private pass(h: Held, startMs: number): void {
    const c = h.conn;
    if (!c.open || c.gen !== h.gen) return;
    let t = startMs;
    for (let i = h.from; i < this.toxics.length; i++) {
      const x = this.toxics[i]!;
      if (x.stream !== h.stream || !c.affected.get(x.name)) continue;
      const a = x.attributes;
      switch (x.type) {
        case 'latency': {
          const jitter = a['jitter'] ?? 0;
          t += (a['latency'] ?? 0) + (jitter > 0 ? Math.floor(this.rng.next() * 2 * jitter) - jitter : 0);
          break;
        }
        case 'bandwidth': {
          const rate = a['rate'] ?? 0;
          if (rate <= 0) {
            this.held.push({ ...h, from: i, by: x.name });
            return;
          }
          t += h.bytes / rate;
          break;
        }
        case 'timeout':
          return; // dropped
        case 'loss':
          if (c.stalled.has(x.name) || this.rng.next() < (a['probability'] ?? 0)) {
            c.stalled.add(x.name);
            return; // lost, and so is everything behind it
          }
          break;
        case 'reset_peer': {
          const gen = c.gen;
          this.clock.timer(t + (a['timeout'] ?? 0), () => {
            if (c.open && c.gen === gen) this.close(c, 'reset');
          });
          return; // dropped
        }
      }
    }
    const out = Math.max(t, c.lastOut[h.stream]);
    c.lastOut[h.stream] = out;
    const gen = h.gen;
    this.clock.timer(out, () => {
      if (c.open && c.gen === gen) h.deliver();
    });
  }

  private close(c: LinkConn, why: 'partition' | 'reset' | 'timeout-removed'): void {
    if (!c.open) return;
    this.release(c);
    c.onClose(why);
  }

  // The fault proxy's API, as the triggers use it (orchestrator/trigger/link.ts).

  addToxic(spec: ToxicSpec): ToxicState {
    if (!(SIM_TOXICS as readonly string[]).includes(spec.type))
      throw new ToxicNotModelled(
        `the simulated link ${this.name} cannot model the ${spec.type} toxic (it models ${SIM_TOXICS.join(', ')}): run this fault on the local or docker lab`,
      );
    const stream = spec.stream ?? 'downstream';
    const name = spec.name ?? `${spec.type}_${stream}`;
    if (this.toxics.some((t) => t.name === name))
      throw new Error(`toxic ${name} already exists on link ${this.name}`);
    const t = { ...spec, name, stream, toxicity: spec.toxicity ?? 1 };
    this.toxics.push(t);
    for (const c of this.conns) c.affected.set(name, this.rng.next() < t.toxicity);
    return { name, type: t.type, stream, toxicity: t.toxicity, attributes: { ...t.attributes } };
  }

  listToxics(): ToxicState[] {
    return this.toxics.map((t) => ({
      name: t.name,
      type: t.type,
      stream: t.stream,
      toxicity: t.toxicity,
      attributes: { ...t.attributes },
    }));
  }

  removeToxic(name: string): void {
    const i = this.toxics.findIndex((t) => t.name === name);
    if (i < 0) throw new Error(`no toxic ${name} on link ${this.name}`);
    const [t] = this.toxics.splice(i, 1);
    // A black hole's connections are closed when it goes (the dropped bytes broke their streams).
    if (t!.type === 'timeout')
      for (const c of [...this.conns]) if (c.affected.get(name)) this.close(c, 'timeout-removed');
    // So are the connections a loss toxic stalled.
    if (t!.type === 'loss')
      for (const c of [...this.conns]) if (c.stalled.has(name)) this.close(c, 'timeout-removed');
    for (const c of this.conns) {
      c.affected.delete(name);
      c.stalled.delete(name);
    }
    // Data a toxic held (bandwidth 0) moves on through the rest of the chain.
    // Data it held (bandwidth 0) moves on through the rest of the chain, which now starts at i.
    const released = this.held.filter((h) => h.by === name);
    this.held = this.held.filter((h) => h.by !== name);
    const now = this.clock.now();
    for (const h of released)
      this.pass(
        { conn: h.conn, gen: h.gen, stream: h.stream, bytes: h.bytes, deliver: h.deliver, from: i },
        now,
      );
  }

  /** Partition: every connection closed, new ones refused. */
  disable(): void {
    this.enabled = false;
    for (const c of [...this.conns]) this.close(c, 'partition');
    this.held = [];
  }

  enable(): void {
    this.enabled = true;
  }
}
