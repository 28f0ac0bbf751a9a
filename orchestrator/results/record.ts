import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { SuccessLog, type SuccessColumns } from '../../bench/record/successLog.js';
import { BenchError } from '../../foundation/errors.js';
import type { RunRecord } from '../analysis/analyseRun.js';

/**
 * A run's record: everything its analysis needs (analysis/analyseRun.ts RunRecord), kept
 * beside the run so `metabench report` can analyse it again without running it. This
 * module is the one reader and writer of the file; nothing else knows its format, so the
 * format can change (to columns, say) without touching the analysis.
 *
 * Today's format: gzip'd JSON of the RunRecord, where what JSON cannot hold is tagged:
 * a typed array as {"$f64"|"$u8": base64 of its little-endian bytes} (another kind as
 * {"$typed": its name, "$b64": its bytes}), a non-finite number or -0 as {"$num":
 * "Infinity"}, the success log as {"$successLog": its columns}. Numbers round-trip
 * exactly (JSON writes the shortest exact decimal), so the analysis of the record read
 * back equals the analysis of the run in memory, bit for bit. Anything else that is not
 * plain data (a Map, an instance of another class) is refused when written:
 * JSON would keep only its own fields and the record would come back as something else.
 */
export const RECORD_FILE = 'record.json.gz';

const FORMAT = 'metabench-run-record';
const VERSION = 1;

export function recordFile(runDir: string): string {
  return join(runDir, RECORD_FILE);
}

export function hasRunRecord(runDir: string): boolean {
  return existsSync(recordFile(runDir));
}

export function writeRunRecord(runDir: string, record: RunRecord): void {
  const json = JSON.stringify({ format: FORMAT, version: VERSION, record }, encode);
  writeFileSync(recordFile(runDir), gzipSync(json));
}

export function readRunRecord(runDir: string): RunRecord {
  const file = recordFile(runDir);
  if (!existsSync(file))
    throw new BenchError(
      'E_USAGE',
      `${file}: missing: this run was recorded by a metabench that kept no record, so it cannot be analysed again`,
      're-run the experiment to re-analyse it',
    );
  let doc: { format?: unknown; version?: unknown; record?: RunRecord };
  try {
    doc = JSON.parse(gunzipSync(readFileSync(file)).toString('utf8'), decode) as typeof doc;
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not a run record: ${(err as Error).message}`);
  }
  if (doc.format !== FORMAT || doc.version !== VERSION || !doc.record)
    throw new BenchError(
      'E_USAGE',
      `${file}: not a run record of version ${VERSION} (format ${String(doc.format)}, version ${String(doc.version)})`,
    );
  return doc.record;
}

function base64(a: ArrayBufferView): string {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
}

/** A fresh, aligned copy of base64 bytes (a Buffer's own offset may not be aligned for 8-byte elements). */
function bytes(b64: string): ArrayBuffer {
  const b = Buffer.from(b64, 'base64');
  const out = new ArrayBuffer(b.byteLength);
  new Uint8Array(out).set(b);
  return out;
}

/** The typed arrays a record may hold besides Float64Array and Uint8Array, by name. */
const TYPED = {
  Float32Array,
  Int8Array,
  Int16Array,
  Int32Array,
  Uint16Array,
  Uint32Array,
  Uint8ClampedArray,
} as const;
type TypedName = keyof typeof TYPED;

function encode(key: string, v: unknown): unknown {
  // String(-0) is "0": -0 is spelt out.
  if (typeof v === 'number')
    return Number.isFinite(v) && !Object.is(v, -0) ? v : { $num: Object.is(v, -0) ? '-0' : String(v) };
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
  if (v instanceof Float64Array) return { $f64: base64(v) };
  if (v instanceof Uint8Array) return { $u8: base64(v) };
  if (v instanceof SuccessLog) return { $successLog: v.columns() };
  for (const [name, T] of Object.entries(TYPED)) if (v instanceof T) return { $typed: name, $b64: base64(v) };
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw new Error(
      `run record: field "${key}" is a ${(v as object).constructor?.name ?? 'non-plain object'}, which the record cannot hold (results/record.ts: add it to the format)`,
    );
  return v;
}

function decode(_key: string, v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  if (typeof o['$num'] === 'string') return Number(o['$num']);
  if (typeof o['$f64'] === 'string') return new Float64Array(bytes(o['$f64']));
  if (typeof o['$u8'] === 'string') return new Uint8Array(bytes(o['$u8']));
  if (o['$successLog'] !== undefined) return SuccessLog.fromColumns(o['$successLog'] as SuccessColumns);
  if (typeof o['$typed'] === 'string' && typeof o['$b64'] === 'string' && o['$typed'] in TYPED)
    return new TYPED[o['$typed'] as TypedName](bytes(o['$b64']));
  return v;
}
