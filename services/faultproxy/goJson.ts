/**
 * JSON as Toxiproxy's Go server reads and writes it, so that our error bodies match
 * its byte for byte: `json.NewDecoder(body).Decode(&v)` (first value only, trailing
 * bytes ignored, keys matched case-insensitively, later duplicates win, type errors
 * reported as "json: cannot unmarshal number 1.5 into Go struct field
 * LatencyToxic.attributes.latency of type int64") and `json.Marshal` (HTML-safe
 * strings, float32 printed in its shortest form).
 */

export type JsonNode =
  | { readonly t: 'obj'; readonly entries: readonly (readonly [string, JsonNode])[] }
  | { readonly t: 'arr'; readonly items: readonly JsonNode[] }
  | { readonly t: 'str'; readonly v: string }
  | { readonly t: 'num'; readonly raw: string }
  | { readonly t: 'bool'; readonly v: boolean }
  | { readonly t: 'null' };

/** A decode error with Go's message (e.g. "EOF", "unexpected EOF", "invalid character ..."). */
export class GoJsonError extends Error {}

export type GoType =
  | { readonly kind: 'string' }
  | { readonly kind: 'bool' }
  | { readonly kind: 'int'; readonly name: 'int' | 'int64' }
  | { readonly kind: 'float32' }
  | { readonly kind: 'struct'; readonly struct: GoStruct };

export interface GoStruct {
  /** The struct's Go name as errors show it ("LatencyToxic"; "" for an anonymous struct). */
  readonly name: string;
  /** Its full type as errors show it ("toxics.LatencyToxic"). */
  readonly typeName: string;
  readonly fields: readonly { readonly json: string; readonly type: GoType }[];
}

export const goString_: GoType = { kind: 'string' };
export const goBool: GoType = { kind: 'bool' };
export const goInt64: GoType = { kind: 'int', name: 'int64' };
export const goInt: GoType = { kind: 'int', name: 'int' };
export const goFloat32: GoType = { kind: 'float32' };
export const goStruct = (struct: GoStruct): GoType => ({ kind: 'struct', struct });

/** Parses the first JSON value of `text` like Go's json.Decoder; throws GoJsonError. */
export function parseGoJson(text: string): JsonNode {
  const p = new Parser(text);
  p.ws();
  if (p.i >= text.length) throw new GoJsonError('EOF');
  return p.value();
}

/**
 * Decodes `node` into `target` (a plain object standing for a Go struct), in place.
 * Returns the first type error's message, or undefined; like Go, the fields that did
 * decode are set either way.
 */
export function decodeStruct(
  node: JsonNode,
  struct: GoStruct,
  target: Record<string, unknown>,
): string | undefined {
  const errors: string[] = [];
  storeStruct(node, struct, target, { struct: undefined, fields: [] }, errors);
  return errors[0];
}

/** Decodes a JSON array of structs (populate's body); returns the elements, or the first error. */
export function decodeStructArray(
  node: JsonNode,
  struct: GoStruct,
  arrayTypeName: string,
  make: () => Record<string, unknown>,
): { items: Record<string, unknown>[]; error: string | undefined } {
  const errors: string[] = [];
  if (node.t === 'null') return { items: [], error: undefined };
  if (node.t !== 'arr') {
    errors.push(typeError(kindOf(node), arrayTypeName, { struct: undefined, fields: [] }));
    return { items: [], error: errors[0] };
  }
  const items = node.items.map((item) => {
    const target = make();
    storeStruct(item, struct, target, { struct: undefined, fields: [] }, errors);
    return target;
  });
  return { items, error: errors[0] };
}

interface Ctx {
  struct: string | undefined;
  fields: string[];
}

function typeError(value: string, type: string, ctx: Ctx): string {
  if (ctx.struct !== undefined && ctx.fields.length > 0)
    return `json: cannot unmarshal ${value} into Go struct field ${ctx.struct}.${ctx.fields.join('.')} of type ${type}`;
  return `json: cannot unmarshal ${value} into Go value of type ${type}`;
}

function kindOf(node: JsonNode): string {
  switch (node.t) {
    case 'obj':
      return 'object';
    case 'arr':
      return 'array';
    case 'str':
      return 'string';
    case 'num':
      return 'number';
    case 'bool':
      return 'bool';
    case 'null':
      return 'null';
  }
}

function typeNameOf(t: GoType): string {
  switch (t.kind) {
    case 'string':
    case 'bool':
    case 'float32':
      return t.kind;
    case 'int':
      return t.name;
    case 'struct':
      return t.struct.typeName;
  }
}

function storeStruct(
  node: JsonNode,
  struct: GoStruct,
  target: Record<string, unknown>,
  ctx: Ctx,
  errors: string[],
): void {
  if (node.t === 'null') return;
  if (node.t !== 'obj') {
    errors.push(typeError(kindOf(node), struct.typeName, ctx));
    return;
  }
  for (const [key, value] of node.entries) {
    // Go prefers an exact match, then a case-insensitive one.
    const field =
      struct.fields.find((f) => f.json === key) ??
      struct.fields.find((f) => f.json.toLowerCase() === key.toLowerCase());
    if (!field) continue;
    const inner: Ctx = { struct: struct.name, fields: [...ctx.fields, field.json] };
    const t = field.type;
    if (t.kind === 'struct') {
      if (value.t === 'null') continue;
      let sub = target[field.json] as Record<string, unknown> | undefined;
      if (sub === undefined || typeof sub !== 'object') target[field.json] = sub = {};
      storeStruct(value, t.struct, sub, inner, errors);
      continue;
    }
    const v = storeScalar(value, t, inner, errors);
    if (v !== undefined) target[field.json] = v;
  }
}

/** The Go value for a scalar field, or undefined to leave the field as it was. */
function storeScalar(node: JsonNode, t: GoType, ctx: Ctx, errors: string[]): unknown {
  if (node.t === 'null') return undefined;
  const fail = (value: string): undefined => {
    errors.push(typeError(value, typeNameOf(t), ctx));
    return undefined;
  };
  switch (t.kind) {
    case 'string':
      return node.t === 'str' ? node.v : fail(kindOf(node));
    case 'bool':
      return node.t === 'bool' ? node.v : fail(kindOf(node));
    case 'int': {
      if (node.t !== 'num') return fail(kindOf(node));
      if (!/^-?\d+$/.test(node.raw)) return fail(`number ${node.raw}`);
      const big = BigInt(node.raw);
      if (big > 9223372036854775807n || big < -9223372036854775808n) return fail(`number ${node.raw}`);
      return Number(big);
    }
    case 'float32': {
      if (node.t !== 'num') return fail(kindOf(node));
      const f = Math.fround(Number(node.raw));
      return Number.isFinite(f) ? f : fail(`number ${node.raw}`);
    }
    default:
      return undefined;
  }
}

// ---- the scanner: Go's error messages for malformed input ----

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return;
      this.i++;
    }
  }

  private peek(): string {
    if (this.i >= this.s.length) throw new GoJsonError('unexpected EOF');
    return this.s[this.i]!;
  }

  private invalid(c: string, where: string): GoJsonError {
    return new GoJsonError(`invalid character ${quoteChar(c)} ${where}`);
  }

  value(): JsonNode {
    this.ws();
    const c = this.peek();
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return { t: 'str', v: this.string() };
    if (c === '-' || (c >= '0' && c <= '9')) return { t: 'num', raw: this.number() };
    if (c === 't') return this.literal('true', { t: 'bool', v: true });
    if (c === 'f') return this.literal('false', { t: 'bool', v: false });
    if (c === 'n') return this.literal('null', { t: 'null' });
    throw this.invalid(c, 'looking for beginning of value');
  }

  private object(): JsonNode {
    this.i++;
    const entries: [string, JsonNode][] = [];
    this.ws();
    if (this.peek() === '}') {
      this.i++;
      return { t: 'obj', entries };
    }
    for (;;) {
      this.ws();
      const c = this.peek();
      if (c !== '"') throw this.invalid(c, 'looking for beginning of object key string');
      const key = this.string();
      this.ws();
      const colon = this.peek();
      if (colon !== ':') throw this.invalid(colon, 'after object key');
      this.i++;
      entries.push([key, this.value()]);
      this.ws();
      const next = this.peek();
      this.i++;
      if (next === '}') return { t: 'obj', entries };
      if (next !== ',') {
        this.i--;
        throw this.invalid(next, 'after object key:value pair');
      }
    }
  }

  private array(): JsonNode {
    this.i++;
    const items: JsonNode[] = [];
    this.ws();
    if (this.peek() === ']') {
      this.i++;
      return { t: 'arr', items };
    }
    for (;;) {
      items.push(this.value());
      this.ws();
      const next = this.peek();
      this.i++;
      if (next === ']') return { t: 'arr', items };
      if (next !== ',') {
        this.i--;
        throw this.invalid(next, 'after array element');
      }
    }
  }

  private string(): string {
    const start = this.i;
    this.i++;
    for (;;) {
      const c = this.peek();
      if (c === '"') break;
      if (c === '\\') {
        this.i++;
        const e = this.peek();
        if (e === 'u') {
          this.i++;
          for (let k = 0; k < 4; k++) {
            const h = this.peek();
            if (!/[0-9a-fA-F]/.test(h)) throw this.invalid(h, 'in \\u hexadecimal character escape');
            this.i++;
          }
          continue;
        }
        if (!'bfnrt\\/"'.includes(e)) throw this.invalid(e, 'in string escape code');
        this.i++;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) throw this.invalid(c, 'in string literal');
      this.i++;
    }
    this.i++;
    return JSON.parse(this.s.slice(start, this.i)) as string;
  }

  private digits(): void {
    while (this.i < this.s.length && this.s[this.i]! >= '0' && this.s[this.i]! <= '9') this.i++;
  }

  private number(): string {
    const start = this.i;
    const isDigit = (c: string): boolean => c >= '0' && c <= '9';
    if (this.s[this.i] === '-') {
      this.i++;
      const c = this.peek();
      if (!isDigit(c)) throw this.invalid(c, 'in numeric literal');
    }
    if (this.s[this.i] === '0') this.i++;
    else this.digits();
    if (this.s[this.i] === '.') {
      this.i++;
      const c = this.peek();
      if (!isDigit(c)) throw this.invalid(c, 'after decimal point in numeric literal');
      this.digits();
    }
    if (this.s[this.i] === 'e' || this.s[this.i] === 'E') {
      this.i++;
      if (this.s[this.i] === '+' || this.s[this.i] === '-') this.i++;
      const c = this.peek();
      if (!isDigit(c)) throw this.invalid(c, 'in exponent of numeric literal');
      this.digits();
    }
    return this.s.slice(start, this.i);
  }

  private literal(word: string, node: JsonNode): JsonNode {
    this.i++;
    for (let k = 1; k < word.length; k++) {
      const c = this.peek();
      if (c !== word[k]) throw this.invalid(c, `in literal ${word} (expecting '${word[k]}')`);
      this.i++;
    }
    return node;
  }
}

/** Go's quoteChar: how a scanner error shows the offending character. */
function quoteChar(c: string): string {
  if (c === "'") return "'\\''";
  if (c === '"') return `'"'`;
  const code = c.charCodeAt(0);
  const named: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\' };
  if (named[c]) return `'${named[c]}'`;
  if (code === 0x07) return "'\\a'";
  if (code === 0x08) return "'\\b'";
  if (code === 0x0c) return "'\\f'";
  if (code === 0x0b) return "'\\v'";
  if (code < 0x20 || code === 0x7f) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  if (code < 0x80) return `'${c}'`;
  // Go reports the first byte of the UTF-8 sequence, read as a rune.
  const first = Buffer.from(c, 'utf8')[0]!;
  if (first < 0xa0) return `'\\u00${first.toString(16).padStart(2, '0')}'`;
  return `'${String.fromCharCode(first)}'`;
}

// ---- encoding like json.Marshal ----

/** A JSON string as Go writes it: HTML-safe (<, >, & escaped) and U+2028/2029 escaped. */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A float32 as json.Marshal prints it: the shortest decimal that reads back as the same float32. */
export function goFloat32String(x: number): string {
  const f = Math.fround(x);
  if (f === 0 || !Number.isFinite(f)) return String(f);
  for (let p = 1; p <= 9; p++) {
    const n = Number(f.toPrecision(p));
    if (Math.fround(n) === f) return String(n);
  }
  return String(f);
}
