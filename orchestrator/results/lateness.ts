import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { BenchError } from '../../foundation/errors.js';
import type { LatenessReplay } from '../analysis/lateness.js';

/**
 * lateness.bin.gz in a run folder: each origin's schedule lag, ms, by origin id (the
 * Recorder's LatenessLog), which the lateness replay gives the simulated twin
 * (orchestrator/run/replay.ts). Gzipped: an 8-byte magic `MBLATE1\n`, the origin count
 * (uint32, little-endian), then one float32 (little-endian) per origin: NaN where no
 * first attempt was recorded, Infinity where the generator gave the origin up (unsent).
 * Float32 keeps a lag to well under a microsecond up to minutes, at four bytes an origin.
 */
export const LATENESS_FILE = 'lateness.bin.gz';
const MAGIC = 'MBLATE1\n';
const HEAD = MAGIC.length + 4;

export function encodeLateness(lags: Float32Array): Buffer {
  const buf = Buffer.alloc(HEAD + 4 * lags.length);
  buf.write(MAGIC, 0, 'latin1');
  buf.writeUInt32LE(lags.length, MAGIC.length);
  for (let i = 0; i < lags.length; i++) buf.writeFloatLE(lags[i]!, HEAD + 4 * i);
  return gzipSync(buf);
}

/** The lags in `bytes` (a lateness.bin.gz's contents); `file` names it in errors. */
export function decodeLateness(bytes: Buffer, file: string): Float32Array {
  let buf: Buffer;
  try {
    buf = gunzipSync(bytes);
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not a gzip file (${(err as Error).message})`);
  }
  if (buf.length < HEAD || buf.toString('latin1', 0, MAGIC.length) !== MAGIC)
    throw new BenchError('E_USAGE', `${file}: not a lateness file (no ${JSON.stringify(MAGIC)} header)`);
  const n = buf.readUInt32LE(MAGIC.length);
  if (buf.length !== HEAD + 4 * n)
    throw new BenchError(
      'E_USAGE',
      `${file}: truncated: its header says ${n} origins (${HEAD + 4 * n} bytes), it holds ${buf.length} bytes`,
    );
  const lags = new Float32Array(n);
  for (let i = 0; i < n; i++) lags[i] = buf.readFloatLE(HEAD + 4 * i);
  return lags;
}

export function writeLateness(runDir: string, lags: Float32Array): void {
  writeFileSync(join(runDir, LATENESS_FILE), encodeLateness(lags));
}

/** The run's recorded lags, or null when it recorded none (a simulated run, an older run). */
export function readLateness(runDir: string): Float32Array | null {
  const file = join(runDir, LATENESS_FILE);
  return existsSync(file) ? decodeLateness(readFileSync(file), file) : null;
}

/** The lateness replay's folder in a run folder: replay/intended/, replay/actual/ (run folders) and REPLAY_FILE. */
export const REPLAY_DIR = 'replay';
/** replay/lateness.json: the two replays compared (ReplayRecord). */
export const REPLAY_FILE = 'lateness.json';

/** replay/lateness.json: the comparison, with its band and what it cost. */
export interface ReplayRecord extends LatenessReplay {
  /** The band recovery times are compared within (the recovery window W), s. */
  readonly recoveryWindowS: number;
  /** Wall-clock time the two simulations took, s. */
  readonly tookS: number;
}

/** A run folder's replay record, or null when its lateness was not replayed. */
export function readReplay(runDir: string): ReplayRecord | null {
  const file = join(runDir, REPLAY_DIR, REPLAY_FILE);
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as ReplayRecord;
  } catch (err) {
    throw new BenchError('E_USAGE', `${file}: not JSON (${(err as Error).message})`);
  }
}
