import type { Socket } from 'node:net';
import {
  decodeStruct,
  goFloat32,
  goFloat32String,
  GoJsonError,
  goJsonString,
  goString_,
  goStruct,
  parseGoJson,
  type GoStruct,
  type JsonNode,
} from './goJson.js';
import {
  ErrBadRequestBody,
  ErrInvalidStream,
  ErrInvalidToxicType,
  ErrToxicAlreadyExists,
  ErrToxicNotFound,
  joinError,
} from './errors.js';
import { Connection, ToxicLink, type LinkDeps } from './link.js';
import { Mutex } from './mutex.js';
import { directions, parseDirection, type Direction } from './stream.js';
import { noop } from './toxics/noop.js';
import { toxicKind } from './toxics/registry.js';
import type { ToxicWrapper } from './toxics/Toxic.js';

/** The create body's envelope, decoded first (attributes only once the type is known). */
const toxicWrapperStruct: GoStruct = {
  name: 'ToxicWrapper',
  typeName: 'toxics.ToxicWrapper',
  fields: [
    { json: 'attributes', type: goStruct({ name: 'NoopToxic', typeName: 'toxics.NoopToxic', fields: [] }) },
    { json: 'name', type: goString_ },
    { json: 'type', type: goString_ },
    { json: 'stream', type: goString_ },
    { json: 'toxicity', type: goFloat32 },
  ],
};

const attributesOnly = (attrs: GoStruct): GoStruct => ({
  name: '',
  typeName: 'struct { Attributes interface {} "json:\\"attributes\\"" }',
  fields: [{ json: 'attributes', type: goStruct(attrs) }],
});

const updateStruct = (attrs: GoStruct): GoStruct => ({
  name: '',
  typeName:
    'struct { Attributes interface {} "json:\\"attributes\\""; Toxicity float32 "json:\\"toxicity\\"" }',
  fields: [
    { json: 'attributes', type: goStruct(attrs) },
    { json: 'toxicity', type: goFloat32 },
  ],
});

function hiddenNoop(direction: Direction): ToxicWrapper {
  return {
    name: '',
    type: 'noop',
    stream: direction,
    toxicity: 1,
    direction,
    attributes: {},
    toxic: noop,
    index: 0,
  };
}

/** Parses a request body as Go's json.Decoder would, or throws "bad request body: <go error>". */
export function parseBody(body: string): JsonNode {
  try {
    return parseGoJson(body);
  } catch (err) {
    if (err instanceof GoJsonError) throw joinError(err.message, ErrBadRequestBody);
    throw err;
  }
}

/** A toxic as the API shows it; key order as Go marshals ToxicWrapper. */
export function toxicJson(w: ToxicWrapper): string {
  const kind = toxicKind(w.type);
  const attrs = (kind?.attributes.fields ?? []).map(
    (f) =>
      `${goJsonString(f.json)}:${f.type.kind === 'float32' ? goFloat32String(w.attributes[f.json] ?? 0) : (w.attributes[f.json] ?? 0)}`,
  );
  return (
    `{"attributes":{${attrs.join(',')}},"name":${goJsonString(w.name)},"type":${goJsonString(w.type)},` +
    `"stream":${goJsonString(w.stream)},"toxicity":${goFloat32String(w.toxicity)}}`
  );
}

/**
 * A proxy's toxics: one chain per direction, each headed by a hidden noop, and the
 * live links they apply to. Changes are serialized and applied to every open
 * connection before the API answers (Toxiproxy's ToxicCollection).
 */
export class ToxicCollection {
  private readonly chain: Record<Direction, ToxicWrapper[]> = {
    upstream: [hiddenNoop('upstream')],
    downstream: [hiddenNoop('downstream')],
  };
  private readonly links = new Set<ToxicLink>();
  private readonly lock = new Mutex();

  constructor(private readonly deps: LinkDeps) {}

  /** Upstream toxics first, then downstream, each in chain order. */
  list(): ToxicWrapper[] {
    return [...this.chain.upstream.slice(1), ...this.chain.downstream.slice(1)];
  }

  find(name: string): ToxicWrapper | undefined {
    for (const d of directions) for (const w of this.chain[d].slice(1)) if (w.name === name) return w;
    return undefined;
  }

  /** Starts both links of a new connection with the current chains. */
  startConnection(conn: Connection, client: Socket, upstream: Socket): void {
    for (const [direction, source, dest] of [
      ['upstream', client, upstream],
      ['downstream', upstream, client],
    ] as const) {
      const link = new ToxicLink(conn, direction, source, dest, this.deps, (l) => this.links.delete(l));
      this.links.add(link);
      link.start(this.chain[direction]);
    }
  }

  /** POST /proxies/{proxy}/toxics. Throws ApiError. */
  addToxicJson(body: string): Promise<ToxicWrapper> {
    return this.lock.run(async () => {
      const node = parseBody(body);
      const env: Record<string, unknown> = { stream: 'downstream', toxicity: 1, name: '', type: '' };
      const err = decodeStruct(node, toxicWrapperStruct, env);
      if (err) throw joinError(err, ErrBadRequestBody);
      const stream = env.stream as string;
      const direction = parseDirection(stream);
      if (!direction) throw ErrInvalidStream;
      const type = env.type as string;
      const name = (env.name as string) || `${type}_${stream}`;
      const kind = toxicKind(type);
      if (!kind) throw ErrInvalidToxicType;
      if (this.find(name)) throw ErrToxicAlreadyExists;
      const attributes = kind.defaults();
      const attrErr = decodeStruct(node, attributesOnly(kind.attributes), { attributes });
      if (attrErr) throw joinError(attrErr, ErrBadRequestBody);

      const chain = this.chain[direction];
      const w: ToxicWrapper = {
        name,
        type,
        stream,
        toxicity: env.toxicity as number,
        direction,
        attributes,
        toxic: kind.create(attributes),
        index: chain.length,
      };
      chain.push(w);
      const before = chain[w.index - 1]!;
      await Promise.all(this.linksOf(direction).map((l) => l.addToxic(w, before, chain)));
      return w;
    });
  }

  /** POST|PATCH /proxies/{proxy}/toxics/{toxic}: only attributes (merged) and toxicity change. */
  updateToxicJson(name: string, body: string): Promise<ToxicWrapper> {
    return this.lock.run(async () => {
      const w = this.find(name);
      if (!w) throw ErrToxicNotFound;
      const kind = toxicKind(w.type)!;
      const node = parseBody(body);
      const holder = { attributes: { ...w.attributes }, toxicity: w.toxicity };
      const err = decodeStruct(node, updateStruct(kind.attributes), holder);
      if (err) throw joinError(err, ErrBadRequestBody);
      w.attributes = holder.attributes;
      w.toxic = kind.create(holder.attributes);
      w.toxicity = holder.toxicity;
      await Promise.all(this.linksOf(w.direction).map((l) => l.updateToxic(w)));
      return w;
    });
  }

  /** DELETE /proxies/{proxy}/toxics/{toxic}. */
  removeToxic(name: string): Promise<void> {
    return this.lock.run(async () => {
      const w = this.find(name);
      if (!w) throw ErrToxicNotFound;
      await this.chainRemove(w);
    });
  }

  /** Removes every toxic (POST /reset). */
  reset(): Promise<void> {
    return this.lock.run(async () => {
      for (const d of directions) while (this.chain[d].length > 1) await this.chainRemove(this.chain[d][1]!);
    });
  }

  private async chainRemove(w: ToxicWrapper): Promise<void> {
    const chain = this.chain[w.direction];
    const index = w.index;
    chain.splice(index, 1);
    for (let i = index; i < chain.length; i++) chain[i]!.index = i;
    const before = chain[index - 1]!;
    await Promise.all(this.linksOf(w.direction).map((l) => l.removeToxic(w, index, before, chain)));
    w.index = -1;
  }

  private linksOf(direction: Direction): ToxicLink[] {
    return [...this.links].filter((l) => l.direction === direction);
  }
}
