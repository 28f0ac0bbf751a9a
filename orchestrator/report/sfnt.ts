import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';

/**
 * A WOFF 1.0 font file as the plain TrueType/OpenType (sfnt) font it wraps: the same
 * tables, each inflated once. pdfkit's font library reads a WOFF's tables through a
 * JavaScript inflate every time a document opens the font (every figure's PDF and the
 * text measurer: a third of a second per report); an sfnt it reads as it is.
 */
export function woffToSfnt(woff: Uint8Array): Buffer {
  const src = Buffer.from(woff.buffer, woff.byteOffset, woff.byteLength);
  if (src.length < 44 || src.toString('latin1', 0, 4) !== 'wOFF') throw new Error('not a WOFF 1.0 font file');
  const numTables = src.readUInt16BE(12);
  const tables = Array.from({ length: numTables }, (_, i) => {
    const at = 44 + i * 20;
    const offset = src.readUInt32BE(at + 4);
    const compLength = src.readUInt32BE(at + 8);
    const origLength = src.readUInt32BE(at + 12);
    const stored = src.subarray(offset, offset + compLength);
    // A table is stored compressed only when that made it smaller.
    const data = compLength < origLength ? inflateSync(stored) : stored;
    if (data.length !== origLength) throw new Error('a WOFF table inflated to the wrong length');
    return { tag: src.readUInt32BE(at), checksum: src.readUInt32BE(at + 16), data };
  });
  const pad4 = (n: number): number => (n + 3) & ~3;
  const headerLength = 12 + 16 * numTables;
  const out = Buffer.alloc(headerLength + tables.reduce((n, t) => n + pad4(t.data.length), 0));
  const pow2 = 2 ** Math.floor(Math.log2(numTables));
  out.writeUInt32BE(src.readUInt32BE(4), 0); // the flavor: TrueType or CFF
  out.writeUInt16BE(numTables, 4);
  out.writeUInt16BE(pow2 * 16, 6);
  out.writeUInt16BE(Math.log2(pow2), 8);
  out.writeUInt16BE(numTables * 16 - pow2 * 16, 10);
  let offset = headerLength;
  tables.forEach((t, i) => {
    // WOFF lists its tables in ascending tag order, as sfnt's directory must be.
    out.writeUInt32BE(t.tag, 12 + i * 16);
    out.writeUInt32BE(t.checksum, 16 + i * 16);
    out.writeUInt32BE(offset, 20 + i * 16);
    out.writeUInt32BE(t.data.length, 24 + i * 16);
    t.data.copy(out, offset);
    offset += pad4(t.data.length);
  });
  return out;
}

const fonts = new Map<string, Buffer>();

/** The sfnt of the WOFF file at `path`, read and inflated once per process. */
export function sfntOf(path: string): Buffer {
  let f = fonts.get(path);
  if (!f) fonts.set(path, (f = woffToSfnt(readFileSync(path))));
  return f;
}
